/**
 * Vitest global setup: the test run must leave no process behind. At the end
 * it looks for processes started during the run that came from its tests:
 * those that inherited the run's marker variable (installed copies run from
 * temp folders), and those whose command line names this checkout while they
 * descend from this run's test workers, or have lost their parent but are still
 * in the run's process group (an MCP server gets a minimal environment, so only
 * its path shows; its daemon may have been killed with SIGKILL). A build or
 * benchmark started by hand in this checkout meanwhile is in a process group
 * of its own, and is left alone. Any still alive
 * after a short grace are listed, killed, and fail the run. What global setups
 * start (a test PostgreSQL server) is theirs to stop and is left alone. Every
 * project inherits this setup; the check runs once. Linux only (it reads
 * /proc); elsewhere it does nothing.
 */
import { randomUUID } from "node:crypto";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { fileURLToPath } from "node:url";

const MARKER = "WARDRIK_TEST_RUN";
/** The vitest process that owns MARKER's value; a nested run (another vitest process) makes its own. */
const OWNER = "WARDRIK_TEST_RUN_OWNER";
const CHECKED = "WARDRIK_TEST_RUN_CHECKED";
const REPO_ROOT = fileURLToPath(new URL("../", import.meta.url));
const GRACE_MS = 5_000;
const SETTLE_MS = 500;
const RUNNER = /vitest|tinypool/;

interface Proc {
  pid: number;
  ppid: number;
  state: string;
  /** The process group: a child inherits it unless it is started detached (a shell's job gets its own). */
  pgrp: number;
  start: number;
  cmdline: string;
}

export function setup(): void {
  // Test workers are forked after the global setups, so every process the tests start inherits it unless its environment is replaced.
  if (process.env[OWNER] !== String(process.pid)) {
    process.env[MARKER] = randomUUID();
    process.env[OWNER] = String(process.pid);
    delete process.env[CHECKED];
  }
}

export async function teardown(): Promise<void> {
  if (process.env[CHECKED] === "1" || !existsSync("/proc/self/stat")) return;
  process.env[CHECKED] = "1";
  const self = readProc(process.pid);
  if (!self) return;
  // A process a test started a moment ago may still be inside exec, when its
  // environment reads as empty: an empty scan counts only after SETTLE_MS.
  const start = Date.now();
  const deadline = start + GRACE_MS;
  let left = leftovers(self);
  while ((left.length > 0 || Date.now() - start < SETTLE_MS) && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 100));
    left = leftovers(self);
  }
  if (left.length === 0) return;
  for (const p of left) {
    try {
      process.kill(p.pid, "SIGKILL");
    } catch {
      // gone meanwhile
    }
  }
  // Vitest only logs an error thrown here; the exit code is what fails CI.
  process.exitCode = 1;
  throw new Error(
    `The tests left ${left.length} process(es) running (now killed); a test or helper must stop what it starts:\n` +
      left.map((p) => `  pid ${p.pid}: ${p.cmdline.slice(0, 300)}`).join("\n"),
  );
}

function leftovers(self: Proc): Proc[] {
  const procs = new Map<number, Proc>();
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    const p = readProc(Number(name));
    if (p) procs.set(p.pid, p);
  }
  const out: Proc[] = [];
  for (const p of procs.values()) {
    if (p.pid === self.pid || p.state === "Z" || p.start < self.start) continue;
    const origin = originOf(p, self.pid, procs);
    if (origin === "runner" || origin === "global-setup") continue;
    const ours = origin === "test" || (origin === "orphan" && p.pgrp === self.pgrp);
    if (hasMarker(p.pid) || (p.cmdline.includes(REPO_ROOT) && ours)) out.push(p);
  }
  return out;
}

/**
 * Where a process hangs in the tree: this runner or its own workers and type
 * checker ("runner"); under a test worker ("test"); under something a global
 * setup started ("global-setup"); under another vitest run ("other-run"); or
 * cut off from any vitest process ("orphan").
 */
function originOf(p: Proc, runner: number, procs: Map<number, Proc>): "runner" | "test" | "global-setup" | "other-run" | "orphan" {
  let child = p;
  for (let hops = 0; hops < 64; hops++) {
    if (child.ppid === runner) {
      // Tests of a threads project run inside the runner process: what they start carries their worker's ID.
      if (!RUNNER.test(child.cmdline) && fromTestThread(child.pid)) return "test";
      if (!RUNNER.test(child.cmdline) && !/typescript\/bin|tsc\b/.test(child.cmdline)) return "global-setup";
      return child === p ? "runner" : "test";
    }
    const parent = procs.get(child.ppid);
    if (!parent || parent.pid <= 1) return "orphan";
    if (RUNNER.test(parent.cmdline) && !isWorkerOf(parent, runner, procs)) return "other-run";
    child = parent;
  }
  return "orphan";
}

function isWorkerOf(p: Proc, runner: number, procs: Map<number, Proc>): boolean {
  for (let q: Proc | undefined = p, hops = 0; q && hops < 64; q = procs.get(q.ppid), hops++) if (q.pid === runner) return true;
  return false;
}

function readProc(pid: number): Proc | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // The command name is in parentheses and may hold spaces; the fields after it are fixed.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const cmdline = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ").trim();
    return { pid, state: fields[0]!, ppid: Number(fields[1]), pgrp: Number(fields[2]), start: Number(fields[19]), cmdline };
  } catch {
    return undefined;
  }
}

/** A process started from a test in a worker thread of the runner (vitest gives each worker's environment its ID). */
function fromTestThread(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/environ`, "utf8")
      .split("\0")
      .some((v) => v.startsWith("VITEST_WORKER_ID="));
  } catch {
    return false;
  }
}

function hasMarker(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/environ`, "utf8").split("\0").includes(`${MARKER}=${process.env[MARKER]}`);
  } catch {
    return false;
  }
}
