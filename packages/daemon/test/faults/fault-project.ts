/**
 * A fault project for the vitest suites: the real daemon (test/helpers/spawn-daemon.ts,
 * cleaned up after the file) with the fault agent, and the real fault worker.
 * One project serves a whole file; each test uses its own message prefix, which
 * picks its turn shape (a script scenario) and names its calls' tags.
 */
import { dirname, join } from "node:path";
import { afterAll, expect } from "vitest";
import { createProject, type TestProject } from "../helpers/spawn-daemon.js";
import { LOST_ANSWER } from "../../src/runtime/types.js";
import { AGENT, faultFiles, faultScript, type TurnShape } from "./fault-agent.js";
import { agentIdOf, eventsOf, followEvents, short, waitUntil, type FaultDaemon, type FaultEvent } from "./fault-api.js";
import { checkInvariants, scopeToMessages, type CheckReport } from "./fault-invariants.js";
import { settle, type SettleResult } from "./fault-settle.js";
import { startWorker, waitForWorker, type FaultWorker, type LogEntry } from "./fault-worker-process.js";

export interface FaultProject {
  p: TestProject;
  d: FaultDaemon;
  /** The worker; a test may put another in its place (it is stopped after the file). */
  w: FaultWorker;
  agentId: string;
  /** Messages the API accepted (202), in order, over the whole file. */
  accepted: string[];
  send(text: string, conversation?: string): Promise<string>;
  /**
   * Starts following the agent's live events from now (resolves once armed);
   * `fired` sends SIGKILL from inside the stream's callback the moment an event
   * matches (`seen`: the events so far), and resolves once the daemon has exited,
   * with Date.now() taken just before the signal.
   */
  armKill(match: (e: FaultEvent, seen: FaultEvent[]) => boolean): Promise<{ fired: Promise<{ at: number; event: FaultEvent }> }>;
  /** Follows the agent's live events from now (resolves once armed); `seen` resolves when one matches. */
  watch(match: (e: FaultEvent, seen: FaultEvent[]) => boolean): Promise<{ seen: Promise<FaultEvent> }>;
  /** SIGKILL now; returns Date.now() just before the signal. */
  crash(): Promise<number>;
  /** Starts the daemon again and (unless told not to) waits until the worker has reconnected. */
  restart(opts?: { waitForWorker?: boolean }): Promise<void>;
  /** The worker's log entries whose tag starts with `prefix`. */
  logOf(prefix: string): LogEntry[];
  /**
   * Approves lost-answer calls until the turns of `messages` (default: every
   * accepted message) have ended, then checks the invariants over what the
   * agent and the worker recorded for those messages (see scopeToMessages).
   */
  settleAndCheck(messages?: string[]): Promise<SettleResult & { report: CheckReport }>;
}

export function asFaultDaemon(p: TestProject): FaultDaemon {
  return {
    dir: p.dir,
    get url() {
      return p.url;
    },
    get token() {
      return p.token;
    },
    get pid() {
      return p.child?.pid;
    },
    start: () => p.start(),
    kill: async () => {
      await p.kill();
    },
    async waitForExit(timeoutMs = 10_000) {
      await waitUntil(() => p.child === undefined, "the daemon to exit", timeoutMs, 5);
    },
  };
}

export interface FaultProjectOptions {
  /** config.yaml `worker_grace`, seconds (default 5: these tests wait it out where no worker comes). */
  workerGrace?: number;
  /** The worker remembers finished calls in this file (FileFinishedCalls). */
  finishedFile?: string;
}

/** Call in beforeAll: the project, the worker (stopped after the file), the agent. */
export async function faultProject(
  byPrefix: Record<string, TurnShape>,
  fallback: TurnShape = {},
  options: FaultProjectOptions = {},
): Promise<FaultProject> {
  const p = await createProject({
    scripts: { [AGENT]: faultScript(fallback, byPrefix) },
    files: faultFiles(),
    remove: ["agents/helper.md"],
    config: (text) => `${text.replace(/\n?$/, "\n")}worker_grace: ${options.workerGrace ?? 5}\n`,
  });
  const d = asFaultDaemon(p);
  const w = startWorker(d, join(dirname(p.dir), "faults"), "worker", { finishedFile: options.finishedFile });
  // The worker a test swapped in (f.w = ...) is stopped too.
  afterAll(() => fp.w.stop());
  await waitForWorker(d, w.child.pid!);
  const agentId = await agentIdOf(d);
  const accepted: string[] = [];
  const fp: FaultProject = {
    p,
    d,
    w,
    agentId,
    accepted,
    async send(text, conversation = "main") {
      const r = await p.apiOk<{ message: string }>("POST", `/v1/agents/${agentId}/messages`, { text, conversation });
      accepted.push(r.message);
      return r.message;
    },
    async armKill(match) {
      const child = p.child;
      if (!child) throw new Error("the daemon is not running");
      let at = 0;
      const { seen } = await fp.watch((e, all) => {
        if (!match(e, all)) return false;
        at = Date.now();
        child.kill("SIGKILL");
        return true;
      });
      return {
        fired: seen.then(async (event) => {
          await d.waitForExit();
          return { at, event };
        }),
      };
    },
    async watch(match) {
      const last = (await eventsOf(d, agentId)).at(-1)?.seq ?? 0;
      const all: FaultEvent[] = [];
      let hit: FaultEvent | undefined;
      const f = followEvents(d, agentId, last, (e) => {
        all.push(e);
        if (!match(e, all)) return false;
        hit = e;
        return true;
      });
      return {
        seen: f.done.then(() => {
          if (!hit) throw new Error(`the event stream ended before the expected event; seen: ${all.map((e) => short(e.type)).join(", ")}`);
          return hit;
        }),
      };
    },
    async crash() {
      const at = Date.now();
      await d.kill();
      return at;
    },
    async restart(opts = {}) {
      await d.start();
      if (opts.waitForWorker !== false) await waitForWorker(d, fp.w.child.pid!);
    },
    logOf: (prefix) => fp.w.log().filter((l) => l.tag.startsWith(prefix)),
    async settleAndCheck(messages = accepted) {
      const r = await settle(d, agentId, messages);
      const report = checkInvariants({ ...scopeToMessages(r.events, fp.w.log(), messages), accepted: messages });
      expect(r.unexpectedApprovals, "approvals asked for another reason than the lost answer").toEqual([]);
      expect(report.failures, "invariants").toEqual([]);
      return { ...r, report };
    },
  };
  return fp;
}

/** The events of the given short type, optionally for one call. */
export function ofType(events: FaultEvent[], type: string, call?: string): FaultEvent[] {
  return events.filter((e) => short(e.type) === type && (call === undefined || e.data.call === call));
}

/** The run (turn) that took `message`. */
export function runOf(events: FaultEvent[], message: string): string {
  const run = events.find((e) => short(e.type) === "turn.started" && (e.data.messages as string[]).includes(message))?.run;
  if (!run) throw new Error(`no turn took message ${message}`);
  return run;
}

/** The events of the turn that took `message`. */
export function turnEvents(events: FaultEvent[], message: string): FaultEvent[] {
  const run = runOf(events, message);
  return events.filter((e) => e.run === run);
}

/** The call IDs of the turn's (single) saved round, by tool name (lookup, upsert, charge). */
export function callsByTool(turn: FaultEvent[]): Record<string, string> {
  const saved = ofType(turn, "round.saved");
  expect(saved).toHaveLength(1);
  return Object.fromEntries(
    (saved[0]!.data.calls as { call: string; tool: string }[]).map((c) => [c.tool.replace(/^workers\//, ""), c.call]),
  );
}

export { LOST_ANSWER };
