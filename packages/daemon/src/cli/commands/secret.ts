import type { Command } from "commander";
import { connect } from "../connect.js";
import { out, UsageError } from "../output.js";

export function registerSecret(program: Command): void {
  const secret = program.command("secret").description("secrets for ${secret:NAME} in config.yaml (encrypted in the database)");
  secret
    .command("set")
    .argument("<name>")
    .description("store a secret; the value is read from standard input, never from the command line")
    .action(async (name: string) => {
      const value = (await readStdin()).replace(/\r?\n$/, "");
      if (!value) throw new UsageError("no value on standard input; try: wardrik secret set NAME < file, or type it and press Ctrl-D");
      await connect().setSecret(name, value);
      out(`Stored secret ${name}. Restart the daemon for config.yaml to use it.`);
    });
  secret
    .command("ls")
    .description("list the names of stored secrets")
    .action(async () => {
      const names = await connect().listSecrets();
      out(names.length ? names.join("\n") : "No secrets.");
    });
}

async function readStdin(): Promise<string> {
  if (process.stdin.isTTY) process.stderr.write("Value (end with Ctrl-D): ");
  let text = "";
  for await (const chunk of process.stdin) text += String(chunk);
  return text;
}
