import { spawn, type ChildProcess } from "node:child_process";
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import type { McpServerEntry } from "../../src/config/types.js";
import type { Logger } from "../../src/log/index.js";
import type { ToolCallContext } from "../../src/tools/toolset.js";
import { freePort } from "../helpers/free-port.js";

const require = createRequire(import.meta.url);

/** Entry scripts of the real servers from npm. */
export const EVERYTHING = require.resolve("@modelcontextprotocol/server-everything/dist/index.js");
export const FILESYSTEM = require.resolve("@modelcontextprotocol/server-filesystem/dist/index.js");

export function fixture(name: string): string {
  return fileURLToPath(new URL(`./fixtures/${name}`, import.meta.url));
}

/** A stdio entry running a Node script, as config.yaml would give it. */
export function nodeServer(script: string, args: string[] = [], env: Record<string, string> = {}): McpServerEntry {
  return { command: process.execPath, args: [script, ...args], env };
}

let seq = 0;
export function ctx(overrides: Partial<ToolCallContext> = {}): ToolCallContext {
  seq += 1;
  return {
    agent: "agt_test",
    org: "default",
    run: "run_test",
    callId: `call_${seq}`,
    idempotencyKey: `key_${seq}`,
    attempt: 1,
    signal: new AbortController().signal,
    cost: () => {},
    timeoutMs: 60_000,
    ...overrides,
  };
}

export const scope = (agentId = "agt_test") => ({ org: "default", agentId });

/** A logger that keeps what it was given, so tests can check that secrets stay out. */
export function memoryLog(): Logger & { lines: string[] } {
  const lines: string[] = [];
  const log = ((level, msg, fields) => {
    lines.push(JSON.stringify({ level, msg, ...fields }));
  }) as Logger & { lines: string[] };
  log.lines = lines;
  return log;
}

export interface HttpEverything {
  url: string;
  port: number;
  child: ChildProcess;
  stop(): Promise<void>;
}

/** server-everything in streamable-HTTP mode, as its own process on a free port. */
export async function startHttpEverything(port?: number): Promise<HttpEverything> {
  const p = port ?? (await freePort());
  const child = spawn(process.execPath, [EVERYTHING, "streamableHttp"], {
    env: { ...process.env, PORT: String(p) },
    stdio: ["ignore", "ignore", "pipe"],
  });
  await new Promise<void>((resolve, reject) => {
    let err = "";
    const timer = setTimeout(() => reject(new Error(`server-everything did not listen on ${p}: ${err}`)), 20_000);
    child.stderr?.on("data", (d: Buffer) => {
      err += d.toString();
      if (err.includes("listening on port")) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`server-everything exited with ${code}: ${err}`));
    });
  });
  return {
    url: `http://127.0.0.1:${p}/mcp`,
    port: p,
    child,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGKILL");
      await exited;
    },
  };
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Polls until `pred` holds, or fails after `timeoutMs`. */
export async function until(pred: () => boolean | Promise<boolean>, timeoutMs = 10_000, what = "condition"): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await pred())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}
