import { LOST_ANSWER, type WorkerToolDescriptor } from "@wardrik/protocol";
import type { Logger } from "../log/logger.js";
import type { KeyRing } from "../secrets/key-ring.js";
import { CLUSTER_HEADER, signRequest } from "./node-key.js";
import type { PostgresDb } from "../store/postgres-db.js";
import type { Unsubscribe } from "../store/postgres-listener.js";
import type { Store } from "../store/store.js";
import { stopReasonOf, type RecallAnswer, type RecallQuestion, type ToolCallContext, type ToolOutcome } from "../tools/toolset.js";
import type { RemoteWorkers } from "../tools/workers/remote-workers.js";

const TOOLS_CHANNEL = "wardrik_worker_tools";
/** How long a node that refused a connection is skipped. */
const REFUSED_MS = 1000;

interface RemoteTool {
  node: string;
  url: string;
  descriptor: WorkerToolDescriptor;
}

/** A forwarded call as the receiving node gets it: what to run, and the owner's decision it runs under. */
export interface ForwardedCall {
  org: string;
  tool: string;
  args: unknown;
  decision: string;
  ctx: { agent: string; run: string; callId: string; idempotencyKey: string; attempt: number; timeoutMs: number };
}

/** A recall question as the receiving node gets it: it asks its own workers once. */
export interface ForwardedRecall {
  org: string;
  question: Pick<RecallQuestion, "callId" | "idempotencyKey" | "attempt" | "runningMs" | "lastInstance">;
}

/** What the receiving node answers: the outcome, and what the tool reported it cost. */
export interface ForwardedAnswer {
  outcome: ToolOutcome;
  cost: number;
}

/**
 * Worker calls across nodes: node to node over HTTP. Each node publishes the
 * tools its workers serve (a table, and a NOTIFY so the others refresh at
 * once); a node with no worker of a tool posts the call to a live node that
 * has one, which runs it on its worker and answers when it ends. Stopping
 * the call (a kill, the timeout, the turn's end) is a second request that
 * says why; a lost connection counts as a lost answer, and the runtime's
 * recovery rule decides what happens next.
 *
 * Each request is signed with the node key (see node-key.ts), and carries
 * the owner's decision; the receiving node runs only a call that its record
 * shows running under that decision (see recorded-call.ts).
 */
export class RemoteWorkerCalls implements RemoteWorkers {
  private byOrg = new Map<string, Map<string, RemoteTool[]>>();
  private next = 0;
  /** Nodes that refused a connection, skipped until then (ms). */
  private readonly refusedUntil = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;
  private unlisten: Unsubscribe | undefined;

  constructor(
    private readonly db: PostgresDb,
    private readonly store: Store,
    private readonly node: string,
    private readonly keyRing: () => KeyRing,
    private readonly aliveMs: number,
    private readonly log: Logger,
  ) {}

  async start(): Promise<void> {
    await this.refresh();
    this.timer = setInterval(() => void this.refresh(), 1000);
    this.timer.unref();
    this.unlisten = await this.db.listen(TOOLS_CHANNEL, () => void this.refresh(), { onReconnect: () => void this.refresh() });
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.unlisten?.();
    await this.store.nodes.remove(this.node).catch(() => undefined);
  }

  private async refresh(): Promise<void> {
    try {
      const rows = await this.store.nodes.remoteWorkerTools(this.node, this.aliveMs);
      const byOrg = new Map<string, Map<string, RemoteTool[]>>();
      for (const r of rows) {
        let byTool = byOrg.get(r.org);
        if (!byTool) byOrg.set(r.org, (byTool = new Map()));
        const list = byTool.get(r.tool) ?? [];
        list.push({ node: r.node, url: r.url, descriptor: JSON.parse(r.descriptor) as WorkerToolDescriptor });
        byTool.set(r.tool, list);
      }
      this.byOrg = byOrg;
    } catch (err) {
      this.log("warn", "reading other nodes' worker tools failed", { err: String(err) });
    }
  }

  tools(org: string): { name: string; descriptor: WorkerToolDescriptor }[] {
    return [...(this.byOrg.get(org) ?? new Map<string, RemoteTool[]>())].map(([name, list]) => ({ name, descriptor: list[0]!.descriptor }));
  }

  nodes(org: string): { node: string; tools: string[] }[] {
    const byNode = new Map<string, string[]>();
    for (const [name, list] of this.byOrg.get(org) ?? new Map<string, RemoteTool[]>())
      for (const t of list) byNode.set(t.node, [...(byNode.get(t.node) ?? []), name]);
    return [...byNode].map(([node, tools]) => ({ node, tools: tools.sort() }));
  }

  publish(org: string, tools: { name: string; descriptor: WorkerToolDescriptor }[]): void {
    void (async () => {
      await this.store.nodes.setWorkerTools(
        this.node,
        org,
        tools.map((t) => ({ name: t.name, descriptor: JSON.stringify(t.descriptor) })),
      );
      await this.db.notify(this.db, TOOLS_CHANNEL, this.node);
    })().catch((err: unknown) => this.log("warn", "publishing this node's worker tools failed", { err: String(err) }));
  }

  async call(org: string, tool: string, args: unknown, ctx: ToolCallContext): Promise<ToolOutcome | undefined> {
    const now = Date.now();
    const nodes = (this.byOrg.get(org)?.get(tool) ?? []).filter((n) => (this.refusedUntil.get(n.node) ?? 0) <= now);
    const start = this.next++;
    for (let i = 0; i < nodes.length; i++) {
      const target = nodes[(start + i) % nodes.length]!;
      const answer = await this.forward(target, { org, tool, args, decision: ctx.decision ?? "allow", ctx: pick(ctx) }, ctx);
      if (answer) return answer;
      // Refused: the node is gone (its heartbeat has not run out yet). Skip it for a while; try the next.
      this.refusedUntil.set(target.node, Date.now() + REFUSED_MS);
    }
    return undefined;
  }

  async recall(org: string, q: RecallQuestion): Promise<RecallAnswer> {
    const nodes = new Map<string, RemoteTool>();
    for (const list of this.byOrg.get(org)?.values() ?? []) for (const t of list) nodes.set(t.node, t);
    const { callId, idempotencyKey, attempt, runningMs, lastInstance } = q;
    const body: ForwardedRecall = { org, question: { callId, idempotencyKey, attempt, runningMs, lastInstance } };
    const http = new AbortController();
    const onAbort = () => http.abort();
    q.signal?.addEventListener("abort", onAbort, { once: true });
    const asks = [...nodes.values()].map(async (target): Promise<RecallAnswer> => {
      try {
        const res = await this.post(target, "/v1/cluster/calls/recall", body, http.signal);
        if (!res.ok) throw new Error(`node ${target.node} answered ${res.status}: ${await res.text()}`);
        const answer = (await res.json()) as RecallAnswer;
        return answer.known ? answer : { known: false, unknownTo: answer.unknownTo.map((w) => ({ ...w, node: w.node ?? target.node })) };
      } catch (err) {
        if (!http.signal.aborted)
          this.log("debug", "asking another node's workers about a call failed", { node: target.node, callId, err: String(err) });
        return { known: false, unknownTo: [] };
      }
    });
    try {
      // The first that knows answers; the others are stopped.
      const known = await Promise.any(asks.map((a) => a.then((r) => (r.known ? r : Promise.reject(new Error("unknown"))))));
      return known;
    } catch {
      return { known: false, unknownTo: (await Promise.all(asks)).flatMap((a) => (a.known ? [] : a.unknownTo)) };
    } finally {
      q.signal?.removeEventListener("abort", onAbort);
      http.abort();
    }
  }

  /** The outcome, or undefined when the node refused the connection (the call never reached it). */
  private async forward(target: RemoteTool, body: ForwardedCall, ctx: ToolCallContext): Promise<ToolOutcome | undefined> {
    const http = new AbortController();
    const onAbort = () => {
      // Say why first (a kill, the timeout, the turn's end), then drop the request. The attempt says which request
      // stops: a new owner may have sent the same call again since (a later attempt), and that one goes on.
      const reason = stopReasonOf(ctx.signal);
      void this.post(target, "/v1/cluster/calls/abort", { callId: body.ctx.callId, attempt: body.ctx.attempt, reason })
        .catch(() => undefined)
        .finally(() => http.abort());
    };
    ctx.signal.addEventListener("abort", onAbort, { once: true });
    try {
      const res = await this.post(target, "/v1/cluster/calls", body, http.signal);
      if (!res.ok) throw new Error(`node ${target.node} answered ${res.status}: ${await res.text()}`);
      const answer = (await res.json()) as ForwardedAnswer;
      // Its worker left before the call arrived: nothing ran there, so another node (or a wait) may serve it.
      if (!answer.outcome.ok && answer.outcome.kind === "unavailable") return undefined;
      if (answer.cost > 0) ctx.cost(answer.cost);
      return answer.outcome;
    } catch (err) {
      if (ctx.signal.aborted) return { ok: false, kind: "killed", error: `workers/${body.tool} was stopped.` };
      if ((err as { cause?: { code?: string } }).cause?.code === "ECONNREFUSED") return undefined;
      this.log("warn", "a call sent to another node's worker lost its answer", {
        node: target.node,
        callId: body.ctx.callId,
        err: String(err),
      });
      return { ok: false, kind: "lost", error: LOST_ANSWER, nodeGone: target.node };
    } finally {
      ctx.signal.removeEventListener("abort", onAbort);
    }
  }

  /** Posts `body` to another node, signed. */
  private post(target: RemoteTool, path: string, body: unknown, signal?: AbortSignal): Promise<Response> {
    const text = JSON.stringify(body);
    const headers = { "content-type": "application/json", [CLUSTER_HEADER]: signRequest(this.keyRing(), "POST", path, text) };
    return fetch(`${target.url}${path}`, { method: "POST", headers, body: text, ...(signal ? { signal } : {}) });
  }
}

function pick(ctx: ToolCallContext): ForwardedCall["ctx"] {
  const { agent, run, callId, idempotencyKey, attempt, timeoutMs } = ctx;
  return { agent, run, callId, idempotencyKey, attempt, timeoutMs };
}
