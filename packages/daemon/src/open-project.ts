/**
 * The first steps of a daemon's start: config.yaml read once to find the
 * database, the database opened (locked, when it is a SQLite file, so one
 * daemon owns it), the stored secrets loaded into the redactor, then
 * config.yaml read again with the secrets it names.
 */
import { mkdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { CONFIG_FILE, DEFAULT_LEASE_SECONDS, loadConfig, type KeyPath, type ProjectConfig } from "./config/index.js";
import { carriesCredentials } from "./config/credential-keys.js";
import { SECRET_STAND_IN } from "./config/references.js";
import { setAside, type UnreadableUse } from "./config/unreadable-secrets.js";
import type { Logger } from "./log/index.js";
import type { SecretRedactor } from "./secrets/redactor.js";
import type { ServerCredential } from "./tools/mcp/mcp-toolset-options.js";
import { DatabaseLock } from "./store/database-lock.js";
import { openDb, type OpenedDb } from "./store/open-db.js";
import { SecretStore } from "./store/secrets.js";

export interface OpenedProject {
  db: OpenedDb;
  lock: DatabaseLock | undefined;
  config: ProjectConfig;
  secrets: SecretStore;
  /** Per MCP server of config.yaml, every `${env:}` and `${secret:}` value resolved into its entry. */
  serverCredentials: Map<string, ServerCredential[]>;
}

export async function openProject(
  dir: string,
  o: { env: NodeJS.ProcessEnv; redactor: SecretRedactor; log: Logger; synchronous: "NORMAL" | "FULL"; node?: string },
): Promise<OpenedProject> {
  const { env, redactor, log } = o;
  // Secrets live in the database, which config names: read config once to find
  // the database (a secret there is an error), then again with the secrets.
  const PLACEHOLDER = SECRET_STAND_IN;
  // A secret in database: is refused for what it is, before the stand-in fails the URL's own check.
  if (/^database:.*\$\{secret:/m.test(readConfigText(dir)))
    throw new Error("config.yaml database: cannot use ${secret:...}, since secrets are stored in the database; use ${env:...}.");
  const bootstrap = loadConfig(dir, { env, secret: () => PLACEHOLDER });
  if (bootstrap.database.includes(PLACEHOLDER))
    throw new Error("config.yaml database: cannot use ${secret:...}, since secrets are stored in the database; use ${env:...}.");
  // One daemon per SQLite database: a second one would run the first one's turns again.
  // (On PostgreSQL several daemons form a cluster; leases keep each agent on one node.)
  const sqlite = bootstrap.database.startsWith("sqlite:");
  // A project cloned without its .wardrik/ (it is ignored by git) starts with a new database there.
  if (sqlite && bootstrap.database !== "sqlite::memory:")
    mkdirSync(dirname(bootstrap.database.slice("sqlite:".length)), { recursive: true, mode: 0o700 });
  const lock = sqlite ? DatabaseLock.acquire(bootstrap.database.slice("sqlite:".length)) : undefined;
  let db: OpenedDb;
  try {
    db = await openDb(bootstrap.database, {
      synchronous: o.synchronous,
      log,
      // pg_stat_activity names the node whose sessions hold a lock.
      applicationName: o.node === undefined ? "wardrik" : `wardrik ${o.node}`,
      // A node frozen longer than its lease has lost its agents: its open transaction, and the rows it locked, go then too.
      idleInTransactionMs: (bootstrap.cluster?.idle_in_transaction ?? bootstrap.cluster?.lease ?? DEFAULT_LEASE_SECONDS) * 1000,
    });
  } catch (err) {
    lock?.release();
    throw err;
  }
  let config: ProjectConfig;
  let secrets: SecretStore;
  const serverCredentials = new Map<string, ServerCredential[]>();
  try {
    // A secret stored while the daemon runs is blanked from then on, too.
    secrets = new SecretStore(db, join(dir, ".wardrik", "secret-key"), {
      env,
      onSet: (org, name, value) => redactor.add(value, name, org),
    });
    // Every org's secrets, not only those config.yaml uses: no org's secret may show anywhere (each in its own org's view).
    const stored = await secrets.everything();
    for (const s of stored.values) redactor.add(s.value, s.name, s.org);
    for (const u of stored.unreadable) log("warn", "a stored secret cannot be decrypted", { org: u.org, secret: u.name, error: u.error });
    // config.yaml's org's secrets, and those of each org with a part of its own (orgs.ORG), which its references read.
    const known = new Map<string, Awaited<ReturnType<SecretStore["readable"]>>>();
    for (const org of [bootstrap.org, ...Object.keys(bootstrap.orgs ?? {})]) known.set(org, await secrets.readable(org));
    const ownerOf = (path: KeyPath) => (path[0] === "orgs" ? String(path[1]) : bootstrap.org);
    // A secret that does not decrypt stops only what needs it: a stand-in lets the rest of the file load.
    const unreadable: UnreadableUse[] = [];
    const loaded = loadConfig(dir, {
      env,
      secret: (name, path) => known.get(ownerOf(path))?.values.get(name),
      unreadableSecret: (name, path) => known.get(ownerOf(path))?.unreadable.get(name),
      standIn: (use) => {
        unreadable.push(use);
        return PLACEHOLDER;
      },
      // An ${env:} value in an MCP server's command, args or headers (or another key that carries credentials) is as secret as a stored one.
      onResolved: (ref) => {
        if (ref.kind === "env" && carriesCredentials(ref.path)) redactor.add(ref.value, undefined, ownerOf(ref.path));
        const server = serverOf(ref.path);
        if (server !== undefined && carriesCredentials(ref.path)) {
          const list = serverCredentials.get(server) ?? [];
          serverCredentials.set(server, [...list, { value: ref.value, ...(ref.kind === "secret" ? { name: ref.name } : {}) }]);
        }
      },
    });
    config = setAside(loaded, unreadable, (part, why) =>
      log("error", `${part} of config.yaml is off: a secret it names cannot be decrypted`, { part, reason: why }),
    );
  } catch (err) {
    await db.close();
    lock?.release();
    throw err;
  }
  // Credentials config.yaml may take from ${env:}: model API keys, webhook signing secrets. They are config.yaml's
  // org's: a model's key never reaches another org's agent (a provider's error quoting it is scrubbed where the model
  // is resolved), and a granted MCP server's own credentials are blanked by the server's redactor for every org.
  const own = (value: string | undefined) => redactor.add(value, undefined, config.org);
  for (const m of Object.values(config.models)) own(m.api_key);
  for (const s of config.subscribers ?? []) own(s.secret);
  if (config.slack) {
    own(config.slack.bot_token);
    own(config.slack.signing_secret);
  }
  return { db, lock, config, secrets, serverCredentials };
}

function readConfigText(dir: string): string {
  try {
    return readFileSync(join(dir, CONFIG_FILE), "utf8");
  } catch {
    return ""; // loadConfig says what is wrong with a missing or unreadable file
  }
}

/** The MCP server a key of config.yaml belongs to (`mcp.NAME...` or `orgs.ORG.mcp.NAME...`). */
function serverOf(path: KeyPath): string | undefined {
  if (path[0] === "mcp" && path[1] !== undefined) return String(path[1]);
  if (path[0] === "orgs" && path[2] === "mcp" && path[3] !== undefined) return String(path[3]);
  return undefined;
}
