import type { Command } from "commander";
import { initProject } from "../init-project.js";
import { examples, json, out } from "../output.js";

export function registerInit(program: Command): void {
  examples(
    program
      .command("init")
      .argument("<dir>", "directory to create the project in")
      .option("--json", "print JSON")
      .description("create a project: config.yaml, an example agent, a policy, a worker file, an admin token"),
    "wardrik init demo && cd demo && wardrik daemon",
  ).action((dir: string, opts: { json?: boolean }) => {
    const { dir: where, files } = initProject(dir);
    if (opts.json) return json({ dir: where, files });
    out(`Created a Wardrik project in ${where}:`);
    for (const f of files) out(`  ${f}`);
    out(`\nNext: cd ${dir} && wardrik daemon, then in another terminal: wardrik ask helper "Hello"`);
    out(`Worker tools: npm install && npm run worker, then: wardrik ask helper "Refund order ord_1234"`);
  });
}
