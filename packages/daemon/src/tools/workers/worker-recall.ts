import { randomUUID } from "node:crypto";
import type { WorkerRecalled } from "@wardrik/protocol";
import type { Logger } from "../../log/logger.js";
import type { RecallAnswer, RecallQuestion, ToolOutcome, WorkerRef } from "../toolset.js";
import type { RemoteWorkers } from "./remote-workers.js";
import type { WorkerCalls } from "./worker-calls.js";
import type { WorkerConnection } from "./worker-connection.js";

/** A worker that has not answered by then is taken not to know the call (an SDK older than the question never answers). */
export const RECALL_ANSWER_MS = 2000;
/** How often workers that connected meanwhile are asked, here and on the other nodes. */
const LOCAL_ROUND_MS = 200;
const REMOTE_ROUND_MS = 1000;

export interface RecallHost {
  /** The greeted, open connections of an org on this node. */
  connections(org: string): WorkerConnection[];
  readonly calls: WorkerCalls;
  readonly remote: RemoteWorkers | undefined;
  closed(): boolean;
  log: Logger;
}

type Heard =
  | { kind: "answer"; conn: WorkerConnection; answer: WorkerRecalled | undefined }
  | { kind: "remote"; answer: RecallAnswer }
  | { kind: "kept"; outcome: ToolOutcome | undefined }
  | { kind: "tick" };

/**
 * Asks workers whether they know a call's idempotency key, and gathers what
 * they say (see the `recall` and `recalled` messages of the worker protocol).
 * Meanwhile a plain answer of the call that a reconnecting worker delivers
 * (one it kept through a restart) settles the question too.
 */
export class WorkerRecall {
  private readonly asking = new Map<string, { conn: WorkerConnection; resolve: (a: WorkerRecalled | undefined) => void }>();
  private readonly prefix = randomUUID().slice(0, 8);
  private seq = 0;

  constructor(private readonly host: RecallHost) {}

  /** A worker's answer to a question of this node. */
  answered(conn: WorkerConnection, message: WorkerRecalled): void {
    const asked = this.asking.get(message.ask);
    if (!asked || asked.conn !== conn) {
      this.host.log("debug", "an answer to no open question was dropped", { ...conn.describe(), ask: message.ask });
      return;
    }
    this.asking.delete(message.ask);
    asked.resolve(message);
  }

  /** A connection closed: its open questions get no answer. */
  dropped(conn: WorkerConnection): void {
    for (const [id, asked] of this.asking) {
      if (asked.conn !== conn) continue;
      this.asking.delete(id);
      asked.resolve(undefined);
    }
  }

  /**
   * What the workers of `org` know of the call: connected here, and (with
   * `everywhere`) on the other nodes. Workers are asked as they connect until
   * the question's `until`; one that runs the call is waited for; the answer
   * is "unknown" once nobody is left to ask and the time is up, or the worker
   * the call was last sent to said it does not know it.
   */
  async recall(org: string, q: RecallQuestion, everywhere: boolean): Promise<RecallAnswer> {
    const remote = everywhere ? this.host.remote : undefined;
    const watch = this.host.calls.watch(org, q.callId, q.attempt, 2 ** 31 - 1);
    let kept: Promise<Heard> | undefined = watch.outcome.then((outcome) => ({ kind: "kept" as const, outcome }));
    const open = new Set<Promise<Heard>>();
    const track = (p: Promise<Heard>): void => {
      const tracked: Promise<Heard> = p.then((h) => {
        open.delete(tracked);
        return h;
      });
      open.add(tracked);
    };
    const asked = new Set<WorkerConnection>();
    const unknownTo: WorkerRef[] = [];
    let lastSaidUnknown = false;
    let attachedUntil = 0;
    let remoteBusy = false;
    let nextRemote = 0;
    const stopped = q.signal ? abortPromise(q.signal) : undefined;
    try {
      for (;;) {
        if (q.signal?.aborted || this.host.closed()) return { known: false, unknownTo };
        for (const conn of this.host.connections(org)) {
          if (asked.has(conn)) continue;
          asked.add(conn);
          track(this.ask(conn, q).then((answer) => ({ kind: "answer" as const, conn, answer })));
        }
        const now = Date.now();
        if (remote && !remoteBusy && now >= nextRemote) {
          remoteBusy = true;
          track(remote.recall(org, q).then((answer) => ({ kind: "remote" as const, answer })));
        }
        const attached = kept !== undefined && attachedUntil > now;
        if (!attached && open.size === 0 && (now >= q.until || lastSaidUnknown)) return { known: false, unknownTo };
        let timer: NodeJS.Timeout | undefined;
        const tickMs = Math.max(1, Math.min(remote ? REMOTE_ROUND_MS : LOCAL_ROUND_MS, Math.max(q.until, attachedUntil) - now));
        const tick = new Promise<Heard>((resolve) => (timer = setTimeout(() => resolve({ kind: "tick" }), tickMs)));
        const heard = await Promise.race([tick, ...open, ...(kept ? [kept] : []), ...(stopped ? [stopped] : [])]);
        clearTimeout(timer);
        switch (heard.kind) {
          case "kept":
            // The watched call ended: with its answer, or lost (the worker that ran it left and did not come back).
            if (heard.outcome && !isLost(heard.outcome)) return { known: true, outcome: heard.outcome, attempt: q.attempt };
            kept = undefined;
            attachedUntil = 0;
            break;
          case "answer": {
            const a = heard.answer;
            if (a?.state === "finished") return { known: true, outcome: toOutcome(a), attempt: a.attempt, worker: heard.conn.ref() };
            if (a?.state === "running" && kept) {
              // It runs there now: its answer, from any connection of the org, settles the call.
              watch.bind(heard.conn, a.attempt);
              attachedUntil = Date.now() + q.runningMs;
              this.host.log("info", "a worker still runs a call whose answer was lost; waiting for it", {
                ...heard.conn.describe(),
                callId: q.callId,
                attempt: a.attempt,
              });
            } else if (a?.state === "unknown") {
              unknownTo.push(heard.conn.ref());
              if (heard.conn.instance === q.lastInstance) lastSaidUnknown = true;
            }
            break;
          }
          case "remote":
            remoteBusy = false;
            nextRemote = Date.now() + REMOTE_ROUND_MS;
            if (heard.answer.known) return heard.answer;
            for (const w of heard.answer.unknownTo) {
              if (!unknownTo.some((u) => u.instance === w.instance)) unknownTo.push(w);
              if (w.instance === q.lastInstance) lastSaidUnknown = true;
            }
            break;
          case "tick":
            break;
        }
      }
    } finally {
      watch.cancel();
    }
  }

  private ask(conn: WorkerConnection, q: RecallQuestion): Promise<WorkerRecalled | undefined> {
    const ask = `ask_${this.prefix}_${++this.seq}`;
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.asking.delete(ask);
        resolve(undefined);
      }, RECALL_ANSWER_MS);
      this.asking.set(ask, {
        conn,
        resolve: (answer) => {
          clearTimeout(timer);
          resolve(answer);
        },
      });
      conn.send({ type: "recall", ask, callId: q.callId, idempotencyKey: q.idempotencyKey });
    });
  }
}

function toOutcome(a: Extract<WorkerRecalled, { state: "finished" }>): ToolOutcome {
  return a.ok ? { ok: true, output: a.output ?? null } : { ok: false, kind: "failed", error: a.error };
}

function isLost(outcome: ToolOutcome): boolean {
  return !outcome.ok && outcome.kind === "lost";
}

function abortPromise(signal: AbortSignal): Promise<Heard> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve({ kind: "tick" });
    else signal.addEventListener("abort", () => resolve({ kind: "tick" }), { once: true });
  });
}
