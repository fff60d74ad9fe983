import type { Command } from "commander";
import { connect } from "../connect.js";
import { err, out } from "../output.js";

export function registerToken(program: Command): void {
  program
    .command("token")
    .description("create a bearer token for an org (prints it once)")
    .argument("<org>", "the org the token belongs to")
    .option("--name <name>", "a label for the token")
    .action(async (org: string, opts: { name?: string }) => {
      const t = await connect().createToken(org, opts.name);
      out(t.token);
      err(`Created a token for org ${t.org} ("${t.name}"). Use it as WARDRIK_TOKEN; it is not shown again.`);
    });
}
