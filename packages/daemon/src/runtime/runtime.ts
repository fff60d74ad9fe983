import { DEFAULT_JSON_DEPTH, WardrikError, type ForkResult } from "@wardrik/protocol";
import type { AgentDefinition } from "../config/types.js";
import type { AgentRow, CallRow } from "../store/rows.js";
import { LeaseLostError, type Store } from "../store/store.js";
import type { ToolRegistry } from "../tools/tool-registry.js";
import type { LateAnswer } from "../tools/toolset.js";
import { silentLogger } from "../log/logger.js";
import { createAgent, readDefinition, removeAgent, syncFileAgents, type FileAgent, type SyncReport } from "./agent-admin.js";
import { AgentDriver } from "./agent-driver.js";
import { TurnStop, type EngineOptions } from "./engine-options.js";
import { LocalOwnership, type Ownership, type Poke } from "./ownership.js";
import { enqueue, type Enqueued, type EnqueueOptions } from "./enqueue.js";
import { forkConversation } from "./fork-conversation.js";
import { leaseLostAnswer } from "./lost-lease.js";
import { FairShare } from "./fair-share.js";
import { OrgTurnSlots } from "./org-turn-slots.js";
import { SleepKeeper, type MemoryCollectOptions } from "./sleep-keeper.js";
import { approve, cancel, clear, deny, kill } from "./turn-control.js";
import { answerQuestion } from "./answer-question.js";
import { acceptLateAnswer } from "./late-answer.js";
import { noTelemetry } from "./telemetry.js";
import type { RuntimeHooks } from "./types.js";

export type { FileAgent, SyncReport };

export interface RuntimeOptions extends Partial<Omit<EngineOptions, "turnSlots">> {
  /** Running turns an org may have at once on this node; past it turns wait (the daemon passes config `limits.org_running_turns`; default no limit). */
  orgRunningTurns?: number;
  /** How often idle agents are checked for sleep, in ms. */
  sleepCheckMs?: number;
  /** When a full collection follows many agents falling asleep (default: 100 agents, then 6 s quiet). */
  memoryCollect?: MemoryCollectOptions;
  /** Which node drives which agent (default: this process owns every agent it wakes). */
  ownership?: Ownership;
}

/** The agent is owned by another live node: it drives the agent; this node records and pokes. */
export class OwnedElsewhere extends Error {}

/**
 * The runtime owns the awake agents (drivers) and is the single entry point
 * for everything that changes a run: messages, cancel, kill, clear,
 * approvals, reloads and recovery. The lifecycle itself is in the turn and
 * call machines; this wires requests to them.
 */
export class Runtime {
  private readonly drivers = new Map<string, AgentDriver>();
  private readonly waking = new Map<string, Promise<AgentDriver>>();
  readonly opts: EngineOptions;
  readonly ownership: Ownership;
  private readonly sleep: SleepKeeper;
  private closed = false;

  constructor(
    readonly store: Store,
    readonly tools: ToolRegistry,
    readonly hooks: RuntimeHooks,
    options: RuntimeOptions = {},
  ) {
    this.opts = {
      toolTimeoutMs: options.toolTimeoutMs ?? 60_000,
      reconnectGraceMs: options.reconnectGraceMs ?? 30_000,
      jsonDepth: options.jsonDepth ?? DEFAULT_JSON_DEPTH,
      log: options.log ?? silentLogger,
      telemetry: options.telemetry ?? noTelemetry,
      turnSlots: new OrgTurnSlots(options.orgRunningTurns ?? Number.POSITIVE_INFINITY),
      fairShare: options.fairShare ?? new FairShare(),
      ...(options.modelBackoffMs !== undefined ? { modelBackoffMs: options.modelBackoffMs } : {}),
    };
    this.ownership = options.ownership ?? new LocalOwnership("local", store.leases);
    this.sleep = new SleepKeeper(this, this.drivers, options.sleepCheckMs ?? 1000, options.memoryCollect);
  }

  // ---- agents ----

  syncFileAgents(org: string, entries: FileAgent[]): Promise<SyncReport> {
    return syncFileAgents(this, org, entries);
  }

  createAgent(org: string, def: AgentDefinition): Promise<AgentRow> {
    return createAgent(this, org, def);
  }

  removeAgent(agent: AgentRow): Promise<void> {
    return removeAgent(this, agent);
  }

  /** The driver of an awake agent, if it is awake. */
  awake(agentId: string): AgentDriver | undefined {
    return this.drivers.get(agentId);
  }

  isAwake(agentId: string): boolean {
    return this.drivers.has(agentId);
  }

  /** Whether a turn of the agent waits on this node for its org's place to run (`limits.org_running_turns`). */
  waitsForTurn(agentId: string): boolean {
    return this.drivers.get(agentId)?.waitsForSlot ?? false;
  }

  /** Stops and forgets an agent's driver (removed, or unreadable). */
  async dropDriver(agentId: string, reason: TurnStop = new TurnStop("shutdown")): Promise<void> {
    const d = this.drivers.get(agentId);
    this.drivers.delete(agentId);
    if (d) await d.close(reason);
  }

  /** The driver of the agent if this node owns it or can take it; undefined when another live node drives it. */
  async driverIfOwned(agentId: string): Promise<AgentDriver | undefined> {
    try {
      return await this.driver(agentId);
    } catch (err) {
      if (err instanceof OwnedElsewhere) return undefined;
      throw err;
    }
  }

  /** The driver of a usable agent, created (woken, and taken for this node) on demand. */
  async driver(agentId: string): Promise<AgentDriver> {
    const existing = this.drivers.get(agentId);
    if (existing) return existing;
    let waking = this.waking.get(agentId);
    if (!waking) {
      waking = this.wake(agentId).finally(() => this.waking.delete(agentId));
      this.waking.set(agentId, waking);
    }
    return waking;
  }

  private async wake(agentId: string): Promise<AgentDriver> {
    const row = await this.store.agents.get(agentId);
    if (!row) throw new WardrikError("not_found", `No agent ${agentId}.`);
    let def: AgentDefinition;
    try {
      def = readDefinition(row);
    } catch (err) {
      if (WardrikError.isInstance(err) && row.status !== "unreadable") {
        await this.store.tx(async (w) => {
          await this.store.agents.markUnreadable(w, row.id, err.message);
          w.emit({ id: row.id, org: row.org }, "agent.unreadable", { reason: err.message });
        }, row.org);
      }
      throw err;
    }
    const lease = await this.ownership.claim(row.id);
    if (lease === undefined) throw new OwnedElsewhere(`Agent ${row.name} is driven by another node.`);
    // The worker grace runs from now: after a start, and after a takeover of an agent another node drove.
    const d: AgentDriver = new AgentDriver(row.id, row.org, def, this.store, this.tools, this.hooks, this.opts, Date.now(), lease, {
      unreadable: () => {
        if (this.drivers.get(agentId) === d) this.drivers.delete(agentId);
      },
      leaseLost: () => {
        this.ownership.lost(agentId);
        if (this.drivers.get(agentId) === d) void this.dropDriver(agentId);
      },
      leaseHeld: () => this.ownership.heldNow(agentId, lease),
    });
    await d.load();
    if (this.closed) d.refuseWork();
    this.drivers.set(agentId, d);
    // Awake again: after sleeping, or driven before by a daemon that is gone (a restart, a crash, a node that died)
    // whose lease was never given up; an agent that never ran has no owner.
    const drivenBefore = row.owner_node !== undefined && row.owner_node !== null;
    if (this.sleep.wasAsleep(agentId) || row.status === "asleep" || drivenBefore) {
      await this.store.tx(async (w) => {
        await this.store.agents.markAwake(w, row.id);
        w.emit(d.ref, "agent.awake", {});
      }, row.org);
    }
    return d;
  }

  // ---- messages, turns and calls ----

  enqueue(agent: AgentRow, conversationKey: string, text: string, options?: EnqueueOptions): Promise<Enqueued> {
    return this.fenced(agent.id, () => enqueue(this, agent, conversationKey, text, options));
  }

  /** `reason`: why, when not a person's cancel (the turn's end records it). */
  cancel(agent: AgentRow, conversationKey?: string, reason?: string): Promise<{ cancelled: string[]; dropped: number }> {
    return this.fenced(agent.id, () => cancel(this, agent, conversationKey, reason));
  }

  kill(agent: AgentRow, callId: string): Promise<CallRow> {
    return this.fenced(agent.id, () => kill(this, agent, callId));
  }

  clear(agent: AgentRow, conversationKey?: string): Promise<{ cleared: string[] }> {
    return this.fenced(agent.id, () => clear(this, agent, conversationKey));
  }

  /** A new conversation whose history is `from`'s as it stood at event `atSeq` (`as`: its key). */
  fork(agent: AgentRow, from: string, atSeq: number, as?: string): Promise<ForkResult> {
    return forkConversation(this.store, agent, from, atSeq, as);
  }

  /** `args`: arguments a person edited, already checked against the tool's schema. `by`: who decided (`token:NAME`, `slack:USER`). */
  approve(agent: AgentRow, callId: string, args?: Record<string, unknown>, by?: string): Promise<CallRow> {
    return this.fenced(agent.id, () => approve(this, agent, callId, args, by));
  }

  deny(agent: AgentRow, callId: string, reason?: string, by?: string): Promise<CallRow> {
    return this.fenced(agent.id, () => deny(this, agent, callId, reason, by));
  }

  /** A person's answer to a question (a waiting person/ask call). */
  answer(agent: AgentRow, callId: string, answer: string, by?: string): Promise<CallRow> {
    return this.fenced(agent.id, () => answerQuestion(this, agent, callId, answer, by));
  }

  /**
   * Runs a request for an agent; when its write finds the agent's lease taken
   * by another node, drops the driver and tries once more without it (on a
   * cluster that records the request and tells the owner). Refused again, the
   * request gets a 503 naming where the agent is driven now, never a 500.
   */
  private async fenced<T>(agentId: string, op: () => Promise<T>): Promise<T> {
    try {
      return await op();
    } catch (err) {
      if (!(err instanceof LeaseLostError)) throw err;
      this.opts.log("warn", "a request found the agent's lease taken by another node; this node stops driving it", { agent: agentId });
      this.ownership.lost(agentId);
      // Forgotten at once (its writes are refused anyway); its turns stop in the background.
      void this.dropDriver(agentId);
    }
    try {
      return await op();
    } catch (err) {
      if (!(err instanceof LeaseLostError)) throw err;
      throw await leaseLostAnswer(this.store, agentId);
    }
  }

  /** An answer for a call that nobody here waits for (a worker that kept it through a restart). */
  acceptLateAnswer(org: string, answer: LateAnswer): Promise<boolean> {
    return acceptLateAnswer(this, org, answer);
  }

  // ---- ownership ----

  /** The agents this node drives, with the fencing token of each lease. */
  leases(): Map<string, number> {
    return new Map([...this.drivers.values()].map((d) => [d.id, d.lease]));
  }

  /** Another node changed something of an agent this node drives. */
  poked(agentId: string, poke: Poke): void {
    const d = this.drivers.get(agentId);
    if (!d) return;
    if (poke.kind === "kill") {
      d.calls.killNowOrAtDispatch(poke.call);
      return;
    }
    if (poke.kind === "cleared") {
      for (const c of poke.conversations) d.forgetPrompt(c);
      return;
    }
    if (poke.kind === "late") {
      void this.resettle(d, poke.run, poke.call);
      return;
    }
    if (poke.kind === "cancel") for (const t of poke.turns) d.turnStops.cancel(t);
    void this.resume(agentId).catch((err: unknown) =>
      this.opts.log("error", "resuming a poked agent failed", { agent: agentId, err: String(err) }),
    );
  }

  /** Another node completed a call of a turn driven here late: the round (if open) and the prompt take it in. */
  private async resettle(d: AgentDriver, run: string, callId: string): Promise<void> {
    try {
      const call = await this.store.calls.get(callId);
      const turn = await this.store.turns.get(run);
      if (call?.status === "completed" && call.result !== null)
        d.progress.round(run)?.settle(callId, false, JSON.parse(call.result) as unknown);
      if (turn) d.forgetPrompt(turn.conversation_id);
    } catch (err) {
      this.opts.log("warn", "taking in a late answer completed elsewhere failed", { agent: d.id, call: callId, err: String(err) });
    }
  }

  // ---- recovery ----

  /**
   * Recovery entry point: at start (and when a node takes over an agent),
   * resume every agent's unfinished turns and queued messages.
   */
  async recover(options: { recount?: boolean } = {}): Promise<void> {
    // The open-turn counters are checked against the turns only where no other node writes (one daemon).
    if (options.recount ?? true) await this.store.db.transaction((tx) => this.store.agents.recount(tx));
    for (const id of await this.store.agents.withWork()) await this.resume(id);
  }

  /** Wakes an agent and kicks a runner for every conversation with a running turn or queued messages. */
  async resume(agentId: string): Promise<void> {
    const row = await this.store.agents.get(agentId);
    if (!row || row.status === "unreadable") return;
    const awake = this.drivers.get(agentId);
    // Nothing to do: an agent is woken (and, in a cluster, taken) only for work.
    if (!awake && !(await this.store.agents.hasWork(agentId))) return;
    let d: AgentDriver | undefined;
    try {
      d = await this.driverIfOwned(agentId);
    } catch (err) {
      if (WardrikError.isInstance(err) && err.code === "unreadable") return;
      throw err;
    }
    if (!d) return;
    // A driver that was awake already may hold a stale view: another node recorded a decision or a cancel.
    if (awake === d) await d.refresh();
    const convs = new Set(d.conversations.withRunningTurn());
    for (const c of await this.store.inputs.conversationsWithQueued(agentId)) {
      convs.add(c);
      d.conversations.markQueued(c);
    }
    for (const c of convs) d.kick(c);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.sleep.stop();
    await Promise.all([...this.drivers.values()].map((d) => d.close()));
    this.drivers.clear();
  }
}
