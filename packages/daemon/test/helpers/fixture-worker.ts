/**
 * A worker fixture (a TypeScript file of test/e2e/fixtures that uses the
 * SDK) started as its own process against a test project, run from the
 * sources (bundled once by worker-bundle.ts). It is killed (SIGKILL) when the
 * file's tests end.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { cleanupLater, REPO_ROOT, type TestProject } from "./spawn-daemon.js";
import { workerArgs } from "./worker-bundle.js";

/** Starts `file` (an absolute path) connected to `p` with `env` added; `output()` is what it printed so far. */
export function startFixtureWorker(
  p: TestProject,
  file: string,
  env: NodeJS.ProcessEnv = {},
): { child: ChildProcess; output: () => string } {
  const childEnv: NodeJS.ProcessEnv = { ...process.env, WARDRIK_URL: p.url, WARDRIK_TOKEN: p.token, ...env };
  // vitest's loader options are not the worker's.
  delete childEnv.NODE_OPTIONS;
  const child = spawn(process.execPath, workerArgs(file), {
    cwd: REPO_ROOT,
    env: childEnv,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout!.setEncoding("utf8").on("data", (c: string) => (out += c));
  child.stderr!.setEncoding("utf8").on("data", (c: string) => (out += c));
  cleanupLater(async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((r) => child.once("exit", r));
    child.kill("SIGKILL");
    await exited;
  });
  return { child, output: () => out };
}
