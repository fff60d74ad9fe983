/**
 * Packing the public packages as `npm run pack` does, and installing the
 * tarballs with the real npm into folders outside the checkout. Needs
 * `npm run build` first; installs reach the npm registry (or npm's cache).
 */
import { execFile, spawn } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, readFileSync, readdirSync, statSync } from "node:fs";
import { basename, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import type { ProvidedContext } from "vitest";

export const REPO_ROOT = fileURLToPath(new URL("../../", import.meta.url));
const run = promisify(execFile);

export interface Packed {
  name: string;
  version: string;
  file: string;
}

/** `node scripts/pack.mjs --out DIR`: one tarball per public package. */
export async function packTarballs(out: string): Promise<Packed[]> {
  const { stdout } = await run(process.execPath, [join(REPO_ROOT, "scripts", "pack.mjs"), "--out", out], { cwd: REPO_ROOT });
  return stdout
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as Packed);
}

/** What the `packaging` project's global setup (pack-once.ts) made for the run, if this file runs there. */
async function fromRun<K extends "packedTarballs" | "sqlitePrebuilds">(key: K): Promise<ProvidedContext[K] | undefined> {
  if (!process.env.VITEST) return undefined;
  const { inject } = await import("vitest");
  return inject(key) as ProvidedContext[K] | undefined;
}

/**
 * The tarballs of `npm run pack` in `out`: copies of the run's (packed once,
 * in the `packaging` project), or packed here when the run made none.
 */
export async function packAll(out: string): Promise<Packed[]> {
  const packed = await fromRun("packedTarballs");
  if (!packed) return packTarballs(out);
  mkdirSync(out, { recursive: true });
  return packed.map((p) => {
    const file = join(out, basename(p.file));
    copyFileSync(p.file, file);
    return { ...p, file };
  });
}

export function tarballOf(packed: Packed[], name: string): string {
  const p = packed.find((x) => x.name === name);
  if (!p) throw new Error(`${name} was not packed; packed: ${packed.map((x) => x.name).join(", ")}`);
  return p.file;
}

/** Extracts a tarball into `dir` (its files land under `dir/package`). */
export async function unpack(file: string, dir: string): Promise<string> {
  mkdirSync(dir, { recursive: true });
  await run("tar", ["-xzf", file, "-C", dir]);
  return join(dir, "package");
}

/** Every file under `dir`, as paths relative to it. */
export function filesUnder(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string): void => {
    for (const name of readdirSync(d)) {
      const path = join(d, name);
      if (statSync(path).isDirectory()) walk(path);
      else out.push(relative(dir, path));
    }
  };
  walk(dir);
  return out.sort();
}

export interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The environment for npm and installed programs: nothing that points back into the checkout. */
export function outsideEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    NO_COLOR: "1",
    npm_config_audit: "false",
    npm_config_fund: "false",
    npm_config_update_notifier: "false",
  };
  for (const key of Object.keys(env)) {
    // npm run sets these for the test runner; an install must not inherit the checkout's workspace settings.
    if (key.startsWith("npm_") && !["npm_config_audit", "npm_config_fund", "npm_config_update_notifier", "npm_config_cache"].includes(key))
      delete env[key];
  }
  delete env.NODE_OPTIONS;
  delete env.WARDRIK_URL;
  delete env.WARDRIK_TOKEN;
  delete env.INIT_CWD;
  return { ...env, ...extra };
}

/** Runs a command to its end; rejects with its output when it fails. */
export function exec(command: string, args: string[], opts: { cwd: string; env?: NodeJS.ProcessEnv; timeoutMs?: number }): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: opts.cwd, env: opts.env ?? outsideEnv(), stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (c: string) => (stdout += c));
    child.stderr.setEncoding("utf8").on("data", (c: string) => (stderr += c));
    const timer = setTimeout(() => child.kill("SIGKILL"), opts.timeoutMs ?? 300_000);
    child.once("error", reject);
    child.once("close", (code) => {
      clearTimeout(timer);
      const result = { code, stdout, stderr };
      if (code === 0) resolve(result);
      else reject(new Error(`${command} ${args.join(" ")} exited ${code} in ${opts.cwd}\nstdout: ${stdout}\nstderr: ${stderr}`));
    });
  });
}

/**
 * `npm install ARGS` in `dir`, preferring npm's cache. In the `packaging`
 * project better-sqlite3's install script finds the checkout's own build
 * (see pack-once.ts) instead of compiling SQLite.
 */
export async function npmInstall(dir: string, args: string[], env: NodeJS.ProcessEnv = outsideEnv()): Promise<Run> {
  const prebuilds = await fromRun("sqlitePrebuilds");
  return exec("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund", ...args], {
    cwd: dir,
    env: prebuilds ? { ...env, npm_config_better_sqlite3_local_prebuilds: prebuilds } : env,
    timeoutMs: 600_000,
  });
}

export function readJson<T = Record<string, unknown>>(path: string): T {
  return JSON.parse(readFileSync(path, "utf8")) as T;
}

export function assertBuilt(): void {
  for (const pkg of ["protocol", "sdk", "testing", "daemon"]) {
    if (!existsSync(join(REPO_ROOT, "packages", pkg, "dist")))
      throw new Error(`packages/${pkg}/dist is missing: run \`npm run build\` first.`);
  }
}
