import type { Command } from "commander";
import { connected } from "../connect-on-demand.js";
import { err, examples, json, out } from "../output.js";

export function registerToken(program: Command): void {
  examples(
    program
      .command("token")
      .description("create a bearer token for an org (admin token only); it is printed once")
      .argument("<org>", "the org the token belongs to")
      .option("--name <name>", "a label for the token")
      .option("--json", "print JSON"),
    "wardrik token acme --name ci",
    "WARDRIK_TOKEN=$(wardrik token acme) wardrik ls",
  ).action(async (org: string, opts: { name?: string; json?: boolean }) => {
    const t = await (await connected()).createToken(org, opts.name);
    if (opts.json) return json(t);
    out(t.token);
    err(`Created a token for org ${t.org} ("${t.name}"). Use it as WARDRIK_TOKEN; it is not shown again.`);
  });
}
