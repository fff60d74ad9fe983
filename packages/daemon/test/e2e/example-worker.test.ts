/**
 * The worker `wardrik init` writes (workers/tools.ts), run as `npm run
 * worker` runs it (tsx), against the real daemon: it says once that it
 * connected and what it serves; a refused token ends it with one line, no
 * stack trace; and it finds a daemon started with `--port` through
 * .wardrik/daemon.json. The project's node_modules is the checkout's (the
 * SDK from its build), so nothing is installed.
 */
import { spawn } from "node:child_process";
import { symlinkSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { REPO_ROOT, cleanupLater, createProject, type TestProject } from "../helpers/spawn-daemon.js";

let p: TestProject;

interface Run {
  stderr(): string;
  stdout(): string;
  exited: Promise<number | null>;
  waitFor(text: RegExp, timeoutMs?: number): Promise<RegExpExecArray>;
}

/** `tsx workers/tools.ts` in the project, with `env` added (WARDRIK_* of the runner removed); killed after the file. */
function exampleWorker(env: Record<string, string> = {}): Run {
  const childEnv: NodeJS.ProcessEnv = { ...process.env, ...env };
  for (const key of ["NODE_OPTIONS", ...(env.WARDRIK_URL ? [] : ["WARDRIK_URL"]), ...(env.WARDRIK_TOKEN ? [] : ["WARDRIK_TOKEN"])])
    delete childEnv[key];
  const child = spawn(process.execPath, ["--import", "tsx", join("workers", "tools.ts")], {
    cwd: p.dir,
    env: childEnv,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  child.stdout.setEncoding("utf8").on("data", (c: string) => (out += c));
  child.stderr.setEncoding("utf8").on("data", (c: string) => (err += c));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  cleanupLater(async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill("SIGKILL");
    await exited;
  });
  return {
    stderr: () => err,
    stdout: () => out,
    exited,
    async waitFor(text, timeoutMs = 60_000) {
      const until = Date.now() + timeoutMs;
      for (;;) {
        const m = text.exec(err);
        if (m) return m;
        if (child.exitCode !== null || Date.now() > until) throw new Error(`not seen: ${text}; stderr: ${err}; stdout: ${out}`);
        await new Promise((r) => setTimeout(r, 50));
      }
    },
  };
}

beforeAll(async () => {
  p = await createProject();
  symlinkSync(join(REPO_ROOT, "node_modules"), join(p.dir, "node_modules"), "dir");
});

describe("the example worker of wardrik init", () => {
  it("says once that it connected, as which worker, serving which tools", async () => {
    const w = exampleWorker();
    const line = await w.waitFor(/^Wardrik: worker \S+ connected to (ws:\/\/\S+); serving find_order, refund_order\.$/m);
    expect(line[1]).toBe(`${p.url.replace("http", "ws")}/v1/workers`);
    expect(w.stderr().trim().split("\n")).toHaveLength(1);
  });

  it("with a refused token: one line that says why, no stack trace, exit 1", async () => {
    const w = exampleWorker({ WARDRIK_TOKEN: "wdk_not_a_token" });
    expect(await w.exited).toBe(1);
    expect(w.stderr()).toBe(
      `The daemon at ${p.url.replace("http", "ws")}/v1/workers refused the worker token (401: The token is not valid. Check WARDRIK_TOKEN.).\n`,
    );
  });

  it("finds a daemon started with --port through .wardrik/daemon.json", async () => {
    await p.stop();
    const daemon = p.spawnCli(["daemon", "--port", "0"]);
    await daemon.waitForOutput((_out, err) => /listening on http:\/\/127\.0\.0\.1:\d+/.test(err));
    const url = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(daemon.stderr())![1]!;
    expect(url).not.toBe(p.url);
    const w = exampleWorker();
    await w.waitFor(new RegExp(`connected to ${url.replace("http", "ws")}/v1/workers; serving find_order`));
    await daemon.stop("SIGTERM", 20_000);
  });
});
