import { registerSecretRotate } from "./secret-rotate.js";
import type { Command } from "commander";
import { existsSync } from "node:fs";
import { join } from "node:path";
import type { SecretNames } from "@wardrik/protocol";
import { ADMIN_TOKEN_FILE } from "../../admin-token-file.js";
import type { DaemonClient } from "../daemon-client.js";
import type { OfflineStore } from "../offline-store.js";
import { err, examples, json, out, UsageError } from "../output.js";

/** The daemon's rule for secret names (letters, digits and _, not starting with a digit). */
const SECRET_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,127}$/;
const MAX_SECRET_BYTES = 65_536;

export function registerSecret(program: Command): void {
  const secret = examples(
    program.command("secret").description("secrets for ${secret:NAME} in config.yaml (encrypted in the database)"),
    "wardrik secret set LINEAR_TOKEN < token.txt",
    "wardrik secret ls",
  );
  examples(
    secret
      .command("set")
      .argument("<name>", "the name config.yaml uses: ${secret:NAME}")
      .option("--json", "print JSON")
      .description(
        "store a secret; the value is read from standard input, never from the command line. Works while the daemon is stopped (inside the project directory)",
      ),
    "wardrik secret set LINEAR_TOKEN < token.txt",
    'printf %s "$TOKEN" | wardrik secret set LINEAR_TOKEN',
  ).action(async (name: string, opts: { json?: boolean }) => {
    if (!SECRET_NAME.test(name)) throw new UsageError(`secret names are letters, digits and _ (not starting with a digit); got "${name}"`);
    const value = (await readStdin()).replace(/\r?\n$/, "");
    if (!value) throw new UsageError("no value on standard input; try: wardrik secret set NAME < file, or type it and press Ctrl-D");
    if (Buffer.byteLength(value) > MAX_SECRET_BYTES) throw new UsageError(`the value is longer than ${MAX_SECRET_BYTES} bytes`);
    const offline = await withDaemonOrDatabase(
      (client) => client.setSecret(name, value),
      (store) => store.secrets.set(store.org, name, value),
    );
    if (opts.json) return json({ name, stored: true, daemon: offline === undefined });
    out(`Stored secret ${name}. Restart the daemon for config.yaml to use it.`);
    if (offline) err(`(The daemon did not answer, so it was written to ${offline} directly.)`);
  });
  examples(
    secret.command("ls").option("--json", "print JSON").description("list the names of stored secrets (never their values)"),
    "wardrik secret ls --json",
  ).action(async (opts: { json?: boolean }) => {
    let list: SecretNames = { secrets: [], unreadable: [] };
    await withDaemonOrDatabase(
      async (client) => void (list = await client.listSecrets()),
      async (store) => {
        const { secretNames } = await import("../../secrets/secret-names.js");
        list = secretNames(await store.secrets.list(store.org));
      },
    );
    if (opts.json) return json(list);
    // A secret that cannot be decrypted is marked, with why (never its value).
    const why = new Map(list.unreadable.map((u) => [u.name, u.error]));
    const lines = list.secrets.map((name) => (why.has(name) ? `${name}  (unreadable: ${why.get(name)!})` : name));
    out(lines.length ? lines.join("\n") : "No secrets.");
  });
  registerSecretRotate(secret);
}

/**
 * Runs `viaDaemon`; when no daemon answers (or none has ever started) inside a
 * project, runs `viaDatabase` on the project's database instead and returns its path.
 */
async function withDaemonOrDatabase(
  viaDaemon: (client: DaemonClient) => Promise<unknown>,
  viaDatabase: (store: OfflineStore) => Promise<unknown>,
): Promise<string | undefined> {
  // Loaded here: defining the commands (--help) loads none of the client.
  const [{ connect, findProject }, { isNoAnswer }, { WardrikError }] = await Promise.all([
    import("../connect.js"),
    import("../daemon-client.js"),
    import("@wardrik/protocol/errors"),
  ]);
  const project = findProject();
  // Without an admin token no daemon has ever started here: there is nothing to ask.
  const neverStarted = project !== undefined && !existsSync(join(project.dir, ADMIN_TOKEN_FILE));
  try {
    if (!neverStarted) {
      await viaDaemon(connect(process.cwd(), project));
      return undefined;
    }
  } catch (e) {
    if (!project || !(WardrikError.isInstance(e) && isNoAnswer(e))) throw e;
  }
  {
    // Loaded here: it opens the database with the daemon's own store (and SQLite's native module).
    const { openOfflineStore } = await import("../offline-store.js");
    const store = await openOfflineStore(project.dir);
    try {
      await viaDatabase(store);
    } finally {
      await store.close();
    }
    return store.database;
  }
}

async function readStdin(): Promise<string> {
  if (process.stdin.isTTY) process.stderr.write("Value (end with Ctrl-D): ");
  let text = "";
  for await (const chunk of process.stdin) text += String(chunk);
  return text;
}
