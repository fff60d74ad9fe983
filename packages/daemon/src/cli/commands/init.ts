import type { Command } from "commander";
import { initProject } from "../init-project.js";
import { out } from "../output.js";

export function registerInit(program: Command): void {
  program
    .command("init")
    .argument("<dir>", "directory to create the project in")
    .description("create a project: config.yaml, an example agent, a policy, a worker file, an admin token")
    .action((dir: string) => {
      const { dir: where, files } = initProject(dir);
      out(`Created a Wardrik project in ${where}:`);
      for (const f of files) out(`  ${f}`);
      out(`\nNext: cd ${dir} && wardrik daemon, then in another terminal: wardrik ask helper "Hello"`);
    });
}
