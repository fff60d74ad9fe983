/**
 * The fault-injection kit, shared by the fault tests (test/faults/*.test.ts) and
 * the randomised fault benchmark (bench/faults.ts). It does not import vitest.
 *
 * - The project: an agent `faulty` (tools workers/*, a policy that allows them)
 *   whose scripted model asks, per message, for one round of three worker calls
 *   (readOnly `lookup`, idempotent `upsert`, unsafe `charge`), then answers.
 * - The worker: fixtures/fault-worker.ts, a real worker process (the SDK) that
 *   logs every execution to a file it owns.
 * - Driving: follow the agent's SSE stream to kill on an event; settle after a
 *   restart by approving every lost-answer call until every turn has ended.
 * - Checking: `checkInvariants` reads the daemon's record (events) and the
 *   worker's log and lists every broken promise of SPEC section 5.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { appendFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { LOST_ANSWER } from "../../src/runtime/types.js";
import { freePort } from "../helpers/free-port.js";
import { sleep, waitFor } from "../helpers/wait.js";

export { sleep };

export { LOST_ANSWER };

export const REPO_ROOT = fileURLToPath(new URL("../../../../", import.meta.url));
export const BIN = join(REPO_ROOT, "packages", "daemon", "bin", "wardrik.js");
export const WORKER_FIXTURE = fileURLToPath(new URL("./fixtures/fault-worker.ts", import.meta.url));

export const AGENT = "faulty";
export const TOOLS = ["lookup", "upsert", "charge"] as const;
export type FaultTool = (typeof TOOLS)[number];
export const SAFE: Record<FaultTool, boolean> = { lookup: true, upsert: true, charge: false };

// ---------------------------------------------------------------------------
// The project
// ---------------------------------------------------------------------------

export interface TurnShape {
  /** Delay of the turn's first model call (the one that asks for the round). */
  model1Ms?: number;
  /** Delay of the second model call (after the round's results). */
  model2Ms?: number;
  /** How long each tool runs; a tool left out is not called. */
  toolMs?: Partial<Record<FaultTool, number>>;
  /** How long a repeat of the same call takes (see the worker). */
  rerunMs?: number;
  /** Tools whose first run lasts until the test releases it (FaultWorker.release), instead of their toolMs. */
  hold?: FaultTool[];
}

function scriptSteps(shape: TurnShape, indent: string): string[] {
  const toolMs = shape.toolMs ?? { lookup: 300, upsert: 300, charge: 300 };
  const calls = TOOLS.filter((t) => toolMs[t] !== undefined).map((t) => {
    const args: Record<string, unknown> = { tag: `{{message}}/${t}`, ms: toolMs[t] };
    if (shape.rerunMs !== undefined) args.rerun_ms = shape.rerunMs;
    if (shape.hold?.includes(t)) args.hold = true;
    return `${indent}    - { tool: "workers/${t}", args: ${JSON.stringify(args)} }`;
  });
  return [
    `${indent}- delay_ms: ${shape.model1Ms ?? 0}`,
    `${indent}  tool_calls:`,
    ...calls,
    `${indent}- delay_ms: ${shape.model2Ms ?? 0}`,
    `${indent}  text: "done {{message}}"`,
  ];
}

/**
 * The scripted model: per message, round 1 = the tools of its shape, then a
 * final answer "done <message>". Tags are `<message>/<tool>`. `byPrefix` gives
 * messages that start with a key (and then a "-") their own shape.
 */
export function faultScript(shape: TurnShape = {}, byPrefix: Record<string, TurnShape> = {}): string {
  const lines = ["description: fault injection - one round of worker calls, then an answer"];
  const prefixes = Object.entries(byPrefix);
  if (prefixes.length > 0) {
    lines.push("scenarios:");
    for (const [prefix, s] of prefixes) {
      lines.push(
        `  - match: ${JSON.stringify(`^${prefix.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}-`)}`,
        "    steps:",
        ...scriptSteps(s, "      "),
      );
    }
  }
  lines.push("steps:", ...scriptSteps(shape, "  "), "");
  return lines.join("\n");
}

export const POLICY = `description: The fault-injection agent may use every worker tool without asking.
rules:
  - tool: workers/*
    decision: allow
`;

export function agentMarkdown(extra: Record<string, unknown> = {}): string {
  const fields: Record<string, unknown> = {
    description: "Fault injection: one round of worker calls per message.",
    model: AGENT,
    tools: ["workers/*"],
    policy: "faults",
    max_iterations: 5,
    ...extra,
  };
  return `---\n${Object.entries(fields)
    .map(([k, v]) => `${k}: ${JSON.stringify(v)}`)
    .join("\n")}\n---\nYou run fault-injection rounds.\n`;
}

/**
 * A probe agent with tools ["*"], never sent a message: GET /v1/agents/{id} lists
 * connected workers under tool_sources only for it (http/describe.ts matches the
 * source name `worker NAME (ID)` against the agent's patterns, which `workers/*`
 * never matches). waitForWorker reads it.
 */
export const PROBE_AGENT = `---\ndescription: Lists tool sources.\nmodel: ${AGENT}\ntools: ["*"]\n---\nNever runs.\n`;

/** The files of a fault project, relative to its directory (the script goes to scripts/, see faultScript). */
export function faultFiles(agentExtra: Record<string, unknown> = {}): Record<string, string> {
  return {
    [`agents/${AGENT}.md`]: agentMarkdown(agentExtra),
    "agents/probe.md": PROBE_AGENT,
    "policies/faults.yaml": POLICY,
  };
}

// ---------------------------------------------------------------------------
// The daemon (as the tests and benchmarks see it)
// ---------------------------------------------------------------------------

export interface FaultDaemon {
  readonly dir: string;
  readonly url: string;
  readonly token: string;
  /** The running daemon's pid, if one runs. */
  readonly pid: number | undefined;
  start(): Promise<void>;
  /** SIGKILL, then waits for the exit. */
  kill(): Promise<void>;
  /** Resolves once no daemon process runs (one killed by the worker, say). */
  waitForExit(timeoutMs?: number): Promise<void>;
}

export async function api<T = unknown>(d: Pick<FaultDaemon, "url" | "token">, method: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(d.url + path, {
    method,
    headers: { authorization: `Bearer ${d.token}`, ...(body !== undefined ? { "content-type": "application/json" } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path} answered ${res.status}: ${text}`);
  return (text ? JSON.parse(text) : undefined) as T;
}

export async function agentIdOf(d: FaultDaemon, name = AGENT): Promise<string> {
  const r = await api<{ agents: { id: string; name: string }[] }>(d, "GET", `/v1/agents?name=${encodeURIComponent(name)}`);
  const a = r.agents.find((x) => x.name === name);
  if (!a) throw new Error(`no agent ${name}`);
  return a.id;
}

export interface FaultEvent {
  seq: number;
  type: string;
  time: string;
  run?: string;
  subject?: string;
  data: Record<string, unknown>;
}

export function short(type: string): string {
  return type.startsWith("dev.wardrik.") ? type.slice("dev.wardrik.".length) : type;
}

/** Every event of the agent after `after`. */
export async function eventsOf(d: FaultDaemon, agentId: string, after = 0): Promise<FaultEvent[]> {
  const out: FaultEvent[] = [];
  for (;;) {
    const page = await api<{ events: FaultEvent[] }>(d, "GET", `/v1/agents/${agentId}/events?after=${after}&limit=1000`);
    out.push(...page.events);
    if (page.events.length < 1000) return out;
    after = page.events[page.events.length - 1]!.seq;
  }
}

/** `waitFor` with the fault kit's tighter defaults (20 s, every 25 ms). */
export function waitUntil<T>(
  fn: () => Promise<T | undefined | false> | T | undefined | false,
  what: string,
  timeoutMs = 20_000,
  everyMs = 25,
): Promise<T> {
  return waitFor(fn, what, timeoutMs, everyMs);
}

/** Follows the agent's live events (SSE) from `after`; `onEvent` returning true stops following. */
export function followEvents(
  d: FaultDaemon,
  agentId: string,
  after: number,
  onEvent: (e: FaultEvent) => boolean | void,
): { stop(): void; done: Promise<void> } {
  const controller = new AbortController();
  const done = (async () => {
    const res = await fetch(`${d.url}/v1/agents/${agentId}/events/stream?after=${after}`, {
      headers: { authorization: `Bearer ${d.token}`, accept: "text/event-stream" },
      signal: controller.signal,
    });
    if (!res.ok || !res.body) throw new Error(`event stream answered ${res.status}`);
    const reader = res.body.getReader();
    const decoder = new TextDecoder();
    let buf = "";
    try {
      for (;;) {
        const { done: end, value } = await reader.read();
        if (end) return;
        buf += decoder.decode(value, { stream: true }).replace(/\r\n/g, "\n");
        let cut: number;
        while ((cut = buf.indexOf("\n\n")) >= 0) {
          const block = buf.slice(0, cut);
          buf = buf.slice(cut + 2);
          let kind = "message";
          const data: string[] = [];
          for (const line of block.split("\n")) {
            if (line.startsWith("event:")) kind = line.slice(6).trim();
            else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
          }
          if (kind !== "event" || data.length === 0) continue;
          if (onEvent(JSON.parse(data.join("\n")) as FaultEvent) === true) return;
        }
      }
    } finally {
      await reader.cancel().catch(() => undefined);
    }
  })().catch((err: unknown) => {
    // The daemon dying under the stream is the point of these tests.
    if (
      !controller.signal.aborted &&
      !/terminated|socket|ECONNRESET|aborted/i.test(String((err as Error).message) + String((err as Error).cause))
    )
      throw err;
  });
  return { stop: () => controller.abort(), done };
}

/** mulberry32: a small, fast, seedable PRNG, so a failing random run can be replayed from its seed. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// ---------------------------------------------------------------------------
// The worker
// ---------------------------------------------------------------------------

export interface LogEntry {
  tool: FaultTool;
  key: string;
  phase: "start" | "end";
  pid: number;
  time: number;
  tag: string;
  exec: number;
}

export interface FaultWorker {
  child: ChildProcess;
  logFile: string;
  killFile: string;
  /** The worker's log so far. */
  log(): LogEntry[];
  /**
   * Orders the worker to SIGKILL `pid` once a matching execution has logged
   * "end": before its result leaves ("held", the default), or with the daemon
   * frozen, once the result frame is written to it ("sent").
   */
  killOnEnd(order: { pid: number; tool?: FaultTool; tag?: string; when?: "held" | "sent" }): void;
  /** Ends the held runs (TurnShape.hold) whose tags start with `prefix`, now and from now on. */
  release(prefix: string): void;
  stderr(): string;
  stop(): Promise<void>;
}

export function readLog(file: string): LogEntry[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l) as LogEntry);
}

/**
 * Spawns the fixture worker against the daemon (it reconnects by itself after a restart).
 * `finishedFile`: the worker remembers finished calls in that file (a new process with the same file answers for them).
 */
export function startWorker(
  d: Pick<FaultDaemon, "url" | "token">,
  dir: string,
  name = "worker",
  opts: { finishedFile?: string } = {},
): FaultWorker {
  mkdirSync(dir, { recursive: true });
  const logFile = join(dir, `${name}.log.jsonl`);
  const killFile = join(dir, `${name}.kill.json`);
  const releaseFile = join(dir, `${name}.release`);
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    WARDRIK_URL: d.url,
    WARDRIK_TOKEN: d.token,
    FAULT_LOG: logFile,
    FAULT_KILL_FILE: killFile,
    FAULT_RELEASE_FILE: releaseFile,
    ...(opts.finishedFile ? { FAULT_FINISHED_FILE: opts.finishedFile } : {}),
  };
  delete env.NODE_OPTIONS;
  const child = spawn(process.execPath, ["--conditions=wardrik-source", "--import", "tsx", WORKER_FIXTURE], {
    cwd: REPO_ROOT,
    env,
    stdio: ["pipe", "pipe", "pipe"],
  });
  let err = "";
  child.stderr!.setEncoding("utf8").on("data", (c: string) => (err += c));
  child.stdout!.resume();
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  return {
    child,
    logFile,
    killFile,
    log: () => readLog(logFile),
    killOnEnd(order) {
      writeFileSync(killFile, JSON.stringify(order));
    },
    release(prefix) {
      appendFileSync(releaseFile, `${prefix}\n`);
    },
    stderr: () => err,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      await exited;
    },
  };
}

/** Waits until a worker serving all three fault tools is connected (seen through the probe agent's tool sources). */
export async function waitForWorker(d: FaultDaemon, pid: number, timeoutMs = 45_000): Promise<void> {
  const probe = await agentIdOf(d, "probe");
  await waitUntil(
    async () => {
      const r = await api<{ tool_sources: { name: string; status: string; reason?: string }[] }>(d, "GET", `/v1/agents/${probe}`);
      return r.tool_sources.some(
        (s) => s.name.includes(`fault-worker-${pid}`) && s.status === "connected" && TOOLS.every((t) => s.reason?.includes(t)),
      );
    },
    `worker ${pid} to register its tools`,
    timeoutMs,
  );
}

// ---------------------------------------------------------------------------
// Driving a turn through a crash
// ---------------------------------------------------------------------------

export async function send(d: FaultDaemon, agentId: string, text: string, conversation = "main"): Promise<string> {
  const r = await api<{ message: string }>(d, "POST", `/v1/agents/${agentId}/messages`, { text, conversation });
  return r.message;
}

/** An approval asked because a call's answer was lost: the reason starts with LOST_ANSWER (then says where the call ran). */
export function isLostAnswer(e: FaultEvent): boolean {
  return typeof e.data.reason === "string" && e.data.reason.startsWith(LOST_ANSWER) && e.data.lost === true;
}

export interface SettleResult {
  /** Calls approved after their answer was lost (call ID -> times approved). */
  approved: Map<string, number>;
  /** approval.requested events with another reason than LOST_ANSWER, or not marked lost. */
  unexpectedApprovals: FaultEvent[];
  events: FaultEvent[];
}

/**
 * An approval a policy asked for (a rule decided `ask`), not one asked because
 * a call's answer was lost.
 */
export function isPolicyAsk(e: FaultEvent): boolean {
  return e.data.lost !== true && typeof e.data.rule === "string";
}

/**
 * The approvals granted for a call after its answer was lost (each allows one
 * more run), told apart from the grant of a policy's ask (which allows the first).
 */
export function lostAnswerGrants(callEvents: FaultEvent[]): number {
  let lastAsk: FaultEvent | undefined;
  let grants = 0;
  for (const e of [...callEvents].sort((a, b) => a.seq - b.seq)) {
    if (short(e.type) === "approval.requested") lastAsk = e;
    else if (short(e.type) === "approval.granted" && lastAsk && isLostAnswer(lastAsk)) grants += 1;
  }
  return grants;
}

/**
 * After a restart: approves every call that waits with the lost-answer reason
 * (and, with `policyAsks`, every call a policy rule asks about: the person),
 * until every accepted message's turn has ended. Returns all the agent's events.
 */
export async function settle(
  d: FaultDaemon,
  agentId: string,
  accepted: string[],
  timeoutMs = 30_000,
  opts: { policyAsks?: boolean } = {},
): Promise<SettleResult> {
  const approved = new Map<string, number>();
  const handled = new Set<number>();
  const unexpectedApprovals: FaultEvent[] = [];
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const events = await eventsOf(d, agentId);
    for (const e of events) {
      if (short(e.type) !== "approval.requested" || handled.has(e.seq)) continue;
      handled.add(e.seq);
      // Already answered (by the caller, before this settle).
      if (events.some((x) => x.seq > e.seq && x.data.call === e.data.call && /^approval\.(granted|denied)$/.test(short(x.type)))) continue;
      if (!isLostAnswer(e) && !(opts.policyAsks && isPolicyAsk(e))) {
        unexpectedApprovals.push(e);
        continue;
      }
      const call = String(e.data.call);
      try {
        await api(d, "POST", `/v1/agents/${agentId}/calls/${call}/approve`);
      } catch (err) {
        // Its answer came after all (a worker that kept the call delivered it late): nothing to approve.
        if (/answered 409: .*not_waiting/.test(String(err))) continue;
        throw err;
      }
      approved.set(call, (approved.get(call) ?? 0) + 1);
    }
    if (allEnded(events, accepted)) return { approved, unexpectedApprovals, events: await eventsOf(d, agentId) };
    if (Date.now() > deadline) {
      const open = accepted.filter((m) => !turnEndOf(events, m));
      throw new Error(`turns did not end within ${timeoutMs} ms after the restart; messages without an ended turn: ${open.join(", ")}`);
    }
    await sleep(50);
  }
}

function turnEndOf(events: FaultEvent[], message: string): FaultEvent | undefined {
  const run = events.find((e) => short(e.type) === "turn.started" && (e.data.messages as string[]).includes(message))?.run;
  return run === undefined ? undefined : events.find((e) => e.run === run && /^turn\.(completed|failed|cancelled)$/.test(short(e.type)));
}

function allEnded(events: FaultEvent[], accepted: string[]): boolean {
  return accepted.every((m) => turnEndOf(events, m) !== undefined);
}

// ---------------------------------------------------------------------------
// The invariants
// ---------------------------------------------------------------------------

export interface CheckStats {
  messages: number;
  turns: number;
  calls: number;
  executions: number;
  /** Safe calls that ran more than once (re-run after a crash). */
  safe_reruns: number;
  /** Unsafe calls that waited for approval with the lost-answer reason. */
  lost_answer_approvals: number;
  /** Calls whose worker execution ended but whose result was never stored (the worker's record). */
  lost_results: number;
}

export interface CheckReport {
  failures: string[];
  stats: CheckStats;
}

interface CallInfo {
  id: string;
  run: string;
  tool: string;
  safe: boolean;
  events: FaultEvent[];
}

/**
 * Checks the daemon's record against the worker's own:
 * - every accepted message was recorded and taken by exactly one turn, and every turn completed;
 * - every call of every saved round completed exactly once, with a result one of the worker's
 *   executions (with the call's key) produced; no call started again after its result was stored;
 * - the worker never ran a call more often than the daemon started it, never with another key,
 *   and never after the call's result was stored (a completed call never ran twice);
 * - safe calls (readOnly/idempotent) never waited for a person about a lost answer; an unsafe call
 *   ran at most once plus once per approval of a lost answer; every approval was asked with the
 *   lost-answer reason or by a policy rule (`ask`).
 */
export function checkInvariants(input: { events: FaultEvent[]; log: LogEntry[]; accepted: string[] }): CheckReport {
  const { events, log, accepted } = input;
  const failures: string[] = [];
  const fail = (m: string) => failures.push(m);

  // Messages and turns.
  const queued = new Set(events.filter((e) => short(e.type) === "message.queued").map((e) => String(e.data.message)));
  const started = events.filter((e) => short(e.type) === "turn.started");
  for (const m of accepted) if (!queued.has(m)) fail(`message ${m} was accepted (202) but has no message.queued event`);
  for (const m of new Set([...accepted, ...queued])) {
    const turns = started.filter((e) => (e.data.messages as string[]).includes(m));
    if (turns.length !== 1) fail(`message ${m} was taken by ${turns.length} turns (expected exactly 1)`);
  }
  for (const t of started) {
    const ends = events.filter((e) => e.run === t.run && /^turn\.(completed|failed|cancelled)$/.test(short(e.type)));
    if (ends.length !== 1) fail(`turn ${t.run} ended ${ends.length} times`);
    for (const end of ends) {
      if (short(end.type) !== "turn.completed") fail(`turn ${t.run} ended with ${short(end.type)}: ${String(end.data.reason ?? "")}`);
    }
  }

  // Calls, from the saved rounds.
  const calls = new Map<string, CallInfo>();
  for (const e of events) {
    if (short(e.type) !== "round.saved") continue;
    for (const c of e.data.calls as { call: string; tool: string; read_only: boolean; idempotent: boolean }[]) {
      if (calls.has(c.call)) fail(`call ${c.call} is in two saved rounds`);
      calls.set(c.call, { id: c.call, run: e.run!, tool: c.tool, safe: c.read_only || c.idempotent, events: [] });
    }
  }
  for (const e of events) {
    const id = e.data.call;
    if (typeof id === "string" && calls.has(id) && short(e.type) !== "round.saved") calls.get(id)!.events.push(e);
  }
  const byKey = new Map<string, LogEntry[]>();
  for (const l of log) {
    if (!byKey.has(l.key)) byKey.set(l.key, []);
    byKey.get(l.key)!.push(l);
  }
  // A tag names one call: every execution of it must carry the same key.
  const keysOfTag = new Map<string, Set<string>>();
  for (const l of log) {
    if (!keysOfTag.has(l.tag)) keysOfTag.set(l.tag, new Set());
    keysOfTag.get(l.tag)!.add(l.key);
  }
  for (const [tag, keys] of keysOfTag)
    if (keys.size > 1) fail(`call ${tag} ran with ${keys.size} different idempotency keys: ${[...keys].join(", ")}`);
  for (const key of byKey.keys()) if (!calls.has(key)) fail(`the worker ran key ${key}, which is no saved call`);

  let safeReruns = 0;
  let lostApprovals = 0;
  let lostResults = 0;
  for (const c of calls.values()) {
    const label = `call ${c.id} (${c.tool}${c.safe ? ", safe" : ", unsafe"})`;
    const of = (t: string) => c.events.filter((e) => short(e.type) === t);
    const completed = of("call.completed");
    const startedEv = of("call.started");
    const granted = of("approval.granted");
    const asked = of("approval.requested");
    for (const f of [...of("call.failed"), ...of("call.killed"), ...of("approval.denied")])
      fail(`${label}: ${short(f.type)}: ${JSON.stringify(f.data.error ?? f.data.reason)}`);
    const known = c.tool.startsWith("workers/") ? SAFE[c.tool.slice("workers/".length) as FaultTool] : undefined;
    if (known !== undefined && known !== c.safe) {
      fail(
        `${label}: the worker's tool is ${known ? "safe (readOnly/idempotent)" : "unsafe"}, but the round saved it as ${c.safe ? "safe" : "unsafe"} (the daemon did not know the tool when it saved the round?)`,
      );
    }
    if (completed.length !== 1) fail(`${label} completed ${completed.length} times (expected exactly 1)`);
    const done = completed[0];
    if (done) {
      for (const s of startedEv)
        if (s.seq > done.seq) fail(`${label} started again (attempt ${String(s.data.attempt)}) after its result was stored`);
    }
    for (const s of startedEv) {
      if (s.data.idempotency_key !== c.id)
        fail(`${label} attempt ${String(s.data.attempt)} had idempotency key ${String(s.data.idempotency_key)}, not ${c.id}`);
    }
    const execs = (byKey.get(c.id) ?? []).filter((l) => l.phase === "start");
    const ends = (byKey.get(c.id) ?? []).filter((l) => l.phase === "end");
    if (execs.length > startedEv.length)
      fail(`${label}: the worker ran it ${execs.length} times, the daemon started it ${startedEv.length} times`);
    if (done) {
      const doneAt = Date.parse(done.time);
      for (const x of execs)
        if (x.time > doneAt) fail(`${label} ran again (exec ${x.exec} at ${x.time}) after its result was stored at ${doneAt}`);
      const out = done.data.output as { key?: string; pid?: number; exec?: number } | undefined;
      if (!out || out.key !== c.id || !ends.some((x) => x.pid === out.pid && x.exec === out.exec)) {
        fail(`${label}: its stored result ${JSON.stringify(out)} is not one of the worker's finished executions with its key`);
      }
      lostResults += ends.filter((x) => !(x.pid === out?.pid && x.exec === out?.exec)).length;
    }
    for (const a of asked) {
      if (!isLostAnswer(a) && !isPolicyAsk(a)) fail(`${label} waited for approval with reason ${JSON.stringify(a.data.reason)}`);
    }
    const lostAsks = asked.filter(isLostAnswer);
    const reruns = lostAnswerGrants(c.events);
    if (c.safe) {
      if (lostAsks.length > 0) fail(`${label} is safe to repeat but waited for approval of a lost answer ${lostAsks.length} time(s)`);
      if (execs.length > 1) safeReruns += 1;
    } else {
      if (lostAsks.length > 0) lostApprovals += 1;
      if (execs.length > 1 + reruns)
        fail(`${label} ran ${execs.length} times with ${reruns} approval(s) of a lost answer: an unsafe call ran twice without approval`);
      if (startedEv.length > 1 + reruns)
        fail(`${label} was started ${startedEv.length} times with ${reruns} approval(s) of a lost answer (${granted.length} in all)`);
    }
  }
  return {
    failures,
    stats: {
      messages: queued.size,
      turns: started.length,
      calls: calls.size,
      executions: log.filter((l) => l.phase === "start").length,
      safe_reruns: safeReruns,
      lost_answer_approvals: lostApprovals,
      lost_results: lostResults,
    },
  };
}

/**
 * The part of the record that concerns `messages`: their message.queued events,
 * the events of the turns that took them, and the worker's executions of those
 * turns' calls (plus executions of keys that belong to no saved call at all).
 */
export function scopeToMessages(events: FaultEvent[], log: LogEntry[], messages: string[]): { events: FaultEvent[]; log: LogEntry[] } {
  const wanted = new Set(messages);
  const runs = new Set(
    events.filter((e) => short(e.type) === "turn.started" && (e.data.messages as string[]).some((m) => wanted.has(m))).map((e) => e.run!),
  );
  const allCalls = new Set<string>();
  const mine = new Set<string>();
  for (const e of events) {
    if (short(e.type) !== "round.saved") continue;
    for (const c of e.data.calls as { call: string }[]) {
      allCalls.add(c.call);
      if (runs.has(e.run!)) mine.add(c.call);
    }
  }
  return {
    events: events.filter(
      (e) => (e.run !== undefined && runs.has(e.run)) || (short(e.type) === "message.queued" && wanted.has(String(e.data.message))),
    ),
    log: log.filter((l) => mine.has(l.key) || !allCalls.has(l.key)),
  };
}

// ---------------------------------------------------------------------------
// A standalone daemon (benchmarks; the tests use test/helpers/spawn-daemon.ts)
// ---------------------------------------------------------------------------

function runCli(args: string[], cwd: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd, stdio: ["ignore", "ignore", "pipe"] });
    let err = "";
    child.stderr.setEncoding("utf8").on("data", (c: string) => (err += c));
    child.once("error", reject);
    child.once("close", (code) => (code === 0 ? resolve() : reject(new Error(`wardrik ${args.join(" ")} failed (${code}): ${err}`))));
  });
}

export interface StandaloneProject extends FaultDaemon {
  /** The temp directory holding the project (and anything else the caller puts there). */
  readonly root: string;
  stderr(): string;
  write(rel: string, text: string): void;
  /** SIGKILL if running, then removes the temp directory. */
  dispose(): Promise<void>;
}

/**
 * `wardrik init` in a temp dir, the given files written, config.yaml given a free
 * port, and each script written to scripts/NAME.yaml with a `models:` entry NAME.
 */
export async function standaloneProject(opts: {
  files: Record<string, string>;
  scripts: Record<string, string>;
  env?: NodeJS.ProcessEnv;
  /** config.yaml's `database:` (default: init's SQLite file in the project). */
  database?: string;
}): Promise<StandaloneProject> {
  const root = mkdtempSync(join(tmpdir(), "wardrik-faults-"));
  const dir = join(root, "project");
  await runCli(["init", dir], root);
  rmSync(join(dir, "agents", "helper.md"), { force: true });
  const write = (rel: string, text: string) => {
    mkdirSync(dirname(join(dir, rel)), { recursive: true });
    writeFileSync(join(dir, rel), text);
  };
  for (const [rel, text] of Object.entries(opts.files)) write(rel, text);
  for (const [name, text] of Object.entries(opts.scripts)) write(`scripts/${name}.yaml`, text);
  let config = readFileSync(join(dir, "config.yaml"), "utf8");
  const models = Object.keys(opts.scripts)
    .map((n) => `  ${n}: { provider: script, model: ${n} }\n`)
    .join("");
  config = config.replace(/^models:[ \t]*\n/m, `models:\n${models}`);
  if (opts.database !== undefined) config = config.replace(/^database:.*$/m, `database: ${opts.database}`);
  let port = await freePort();
  const setPort = () => writeFileSync(join(dir, "config.yaml"), config.replace(/^listen:.*$/m, `listen: 127.0.0.1:${port}`));
  setPort();
  const token = readFileSync(join(dir, ".wardrik", "admin-token"), "utf8").trim();
  let child: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();
  let stderr = "";

  const startOnce = async (): Promise<"ok" | "port-taken"> => {
    const env: NodeJS.ProcessEnv = { ...process.env };
    delete env.NODE_OPTIONS;
    delete env.WARDRIK_URL;
    delete env.WARDRIK_TOKEN;
    Object.assign(env, opts.env);
    const proc = spawn(process.execPath, [BIN, "daemon"], { cwd: dir, env, stdio: ["ignore", "ignore", "pipe"] });
    const from = stderr.length;
    const exit = new Promise<void>((resolve) => proc.once("exit", () => resolve()));
    const ready = await new Promise<"ok" | "exit">((resolve) => {
      proc.stderr!.setEncoding("utf8").on("data", (c: string) => {
        stderr += c;
        if (/wardrik daemon listening on/.test(stderr.slice(from))) resolve("ok");
      });
      void exit.then(() => resolve("exit"));
    });
    if (ready === "exit") {
      if (/EADDRINUSE/.test(stderr.slice(from))) return "port-taken";
      throw new Error(`the daemon exited at start:\n${stderr.slice(from)}`);
    }
    child = proc;
    exited = exit.then(() => {
      if (child === proc) child = undefined;
    });
    return "ok";
  };

  const project: StandaloneProject = {
    root,
    dir,
    get url() {
      return `http://127.0.0.1:${port}`;
    },
    token,
    get pid() {
      return child?.pid;
    },
    stderr: () => stderr,
    write,
    async start() {
      if (child) throw new Error("the daemon already runs");
      for (let attempt = 0; (await startOnce()) === "port-taken"; attempt++) {
        if (attempt >= 3) throw new Error("no free port for the daemon");
        port = await freePort();
        setPort();
      }
      await waitUntil(async () => (await fetch(`${project.url}/v1/health`)).ok, "the daemon's health", 20_000);
    },
    async kill() {
      if (!child) throw new Error("the daemon is not running");
      child.kill("SIGKILL");
      await exited;
    },
    async waitForExit(timeoutMs = 10_000) {
      await waitUntil(() => child === undefined, "the daemon to exit", timeoutMs, 5);
    },
    async dispose() {
      if (child) await project.kill();
      rmSync(root, { recursive: true, force: true });
    },
  };
  return project;
}
