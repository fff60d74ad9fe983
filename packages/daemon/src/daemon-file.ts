/**
 * `.wardrik/daemon.json`: where the project's running daemon listens. The
 * daemon writes it once it listens and removes it when it stops cleanly; the
 * CLI (and the example worker) read it, so `wardrik daemon --port N` stays
 * reachable without WARDRIK_URL. A file left by a daemon that died (its pid
 * is gone) is ignored.
 */
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";

export const DAEMON_FILE = join(".wardrik", "daemon.json");

export interface DaemonFile {
  /** The address clients use: http://HOST:PORT (a daemon listening on every interface is reached on 127.0.0.1). */
  url: string;
  pid: number;
  host: string;
  node: string;
  version: string;
  started: string;
}

/** http://HOST:PORT for a client on this machine: 0.0.0.0 and :: listen everywhere, so 127.0.0.1 reaches them. */
export function localUrl(host: string, port: number): string {
  const reachable = host === "0.0.0.0" || host === "::" ? "127.0.0.1" : host;
  return `http://${reachable.includes(":") ? `[${reachable}]` : reachable}:${port}`;
}

/**
 * Writes the file (replacing it whole); returns what removes it again, if it
 * is still this process's. A file that cannot be written is a warning, not a
 * failure: the daemon serves anyway, and the CLI falls back to config.yaml.
 */
export function writeDaemonFile(dir: string, info: Omit<DaemonFile, "pid" | "host">, warn: (message: string) => void): () => void {
  const path = join(dir, DAEMON_FILE);
  const content: DaemonFile = { ...info, pid: process.pid, host: hostname() };
  try {
    mkdirSync(join(dir, ".wardrik"), { recursive: true, mode: 0o700 });
    const tmp = `${path}.${process.pid}.tmp`;
    writeFileSync(tmp, JSON.stringify(content, null, 2) + "\n");
    renameSync(tmp, path);
  } catch (err) {
    warn(`${path} cannot be written (${(err as Error).message}); the CLI will look for the daemon at config.yaml's address`);
    return () => undefined;
  }
  return () => {
    // Another daemon of a cluster may have written it since: leave theirs.
    if (readDaemonFile(dir)?.pid === process.pid) rmSync(path, { force: true });
  };
}

/** The file as written, or undefined when there is none or it cannot be read. */
export function readDaemonFile(dir: string): DaemonFile | undefined {
  try {
    const parsed = JSON.parse(readFileSync(join(dir, DAEMON_FILE), "utf8")) as Partial<DaemonFile>;
    if (typeof parsed.url !== "string" || typeof parsed.pid !== "number") return undefined;
    return parsed as DaemonFile;
  } catch {
    return undefined;
  }
}

/** The file, unless the daemon that wrote it is gone (its pid no longer runs on this host). */
export function readLiveDaemonFile(dir: string): DaemonFile | undefined {
  const file = readDaemonFile(dir);
  if (!file) return undefined;
  // On another host (a shared folder) the pid cannot be checked: trust the file.
  if (file.host !== undefined && file.host !== hostname()) return file;
  return isRunning(file.pid) ? file : undefined;
}

/** Whether a process with this ID runs on this host (as any user). */
export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: it runs, as another user.
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}
