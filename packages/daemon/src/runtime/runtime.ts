import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { WardrikError } from "@wardrik/protocol";
import type { AgentDefinition } from "../config/types.js";
import { STATE_FORMAT, type AgentRow, type CallRow, type Store, type TurnRow, type Writer } from "../store/store.js";
import type { ToolRegistry } from "../tools/tool-registry.js";
import { AgentActor, type ActorOptions, TurnStop } from "./agent-actor.js";
import type { RuntimeHooks } from "./types.js";

export interface RuntimeOptions extends Partial<ActorOptions> {
  /** How often idle agents are checked for sleep, in ms. */
  sleepCheckMs?: number;
}

export interface FileAgent {
  name: string;
  file: string;
  definition?: AgentDefinition;
  error?: string;
}

/**
 * The runtime owns the awake agents (actors) and is the single entry point
 * for everything that changes a run: messages, cancel, kill, clear, approvals,
 * reloads and recovery.
 */
export class Runtime {
  private readonly actors = new Map<string, AgentActor>();
  /** Agents put to sleep by this process whose stored status is not `asleep` (parked ones). */
  private readonly sleeping = new Set<string>();
  private readonly opts: ActorOptions;
  private closed = false;
  private sleepTimer: NodeJS.Timeout | undefined;
  private lastCollect = 0;

  constructor(
    readonly store: Store,
    readonly tools: ToolRegistry,
    readonly hooks: RuntimeHooks,
    options: RuntimeOptions = {},
  ) {
    this.opts = {
      toolTimeoutMs: options.toolTimeoutMs ?? 60_000,
      log: options.log ?? (() => undefined),
      ...(options.modelBackoffMs !== undefined ? { modelBackoffMs: options.modelBackoffMs } : {}),
    };
    const every = options.sleepCheckMs ?? 1000;
    this.sleepTimer = setInterval(() => void this.sleepIdle().catch(() => undefined), every);
    this.sleepTimer.unref();
  }

  // ---- agents ----

  /** Brings the file agents of `org` in line with agents/: add, update, mark unreadable, remove. */
  async syncFileAgents(
    org: string,
    entries: FileAgent[],
  ): Promise<{ added: string[]; updated: string[]; removed: string[]; unreadable: string[] }> {
    const report = { added: [] as string[], updated: [] as string[], removed: [] as string[], unreadable: [] as string[] };
    const existing = new Map((await this.store.listAgents(org)).filter((a) => a.source === "file").map((a) => [a.name, a]));
    for (const entry of entries) {
      const prior = existing.get(entry.name);
      existing.delete(entry.name);
      const definition = entry.definition ? JSON.stringify(entry.definition) : null;
      if (prior && prior.definition === definition && (prior.reason ?? null) === (entry.error ?? null)) continue;
      const conflict = !prior ? await this.store.getAgentByName(org, entry.name) : undefined;
      if (conflict) {
        this.opts.log("warn", `agents/${entry.name}.md is ignored: an agent named ${entry.name} was created through the API`, {});
        continue;
      }
      const id = prior?.id ?? this.store.ids.next("agent");
      await this.store.tx(async (w) => {
        if (!prior) {
          await w.run(
            "INSERT INTO agents (id, org, name, source, definition, file, status, reason, created_at, updated_at) VALUES (?, ?, ?, 'file', ?, ?, ?, ?, ?, ?)",
            [id, org, entry.name, definition, entry.file, entry.error ? "unreadable" : "idle", entry.error ?? null, w.now, w.now],
          );
        } else {
          await w.run("UPDATE agents SET definition = ?, file = ?, reason = ?, status = ?, updated_at = ? WHERE id = ?", [
            definition,
            entry.file,
            entry.error ?? null,
            entry.error ? "unreadable" : prior.status === "unreadable" ? "idle" : prior.status,
            w.now,
            id,
          ]);
        }
        const ref = { id, org };
        if (entry.error) await w.emit(ref, "agent.unreadable", { name: entry.name, file: entry.file, reason: entry.error });
        else
          await w.emit(ref, prior ? "agent.updated" : "agent.loaded", { name: entry.name, file: entry.file, definition: entry.definition });
      });
      (entry.error ? report.unreadable : prior ? report.updated : report.added).push(entry.name);
      const actor = this.actors.get(id);
      if (actor && entry.definition) actor.def = entry.definition;
      if (entry.error && actor) {
        await actor.close();
        this.actors.delete(id);
      }
      if (entry.definition && (!prior || prior.status === "unreadable")) await this.resume(id);
    }
    for (const gone of existing.values()) {
      await this.remove(gone);
      report.removed.push(gone.name);
    }
    return report;
  }

  async createAgent(org: string, def: AgentDefinition): Promise<AgentRow> {
    if (await this.store.getAgentByName(org, def.name)) {
      throw new WardrikError("conflict", `An agent named ${def.name} already exists in org ${org}; pick another name.`);
    }
    const id = this.store.ids.next("agent");
    await this.store.tx(async (w) => {
      await w.run(
        "INSERT INTO agents (id, org, name, source, definition, status, created_at, updated_at) VALUES (?, ?, ?, 'api', ?, 'idle', ?, ?)",
        [id, org, def.name, JSON.stringify(def), w.now, w.now],
      );
      await w.emit({ id, org }, "agent.loaded", { name: def.name, source: "api", definition: def });
    });
    return (await this.store.getAgent(id))!;
  }

  async removeAgent(agent: AgentRow): Promise<void> {
    if (agent.source === "file") {
      throw new WardrikError(
        "conflict",
        `Agent ${agent.name} comes from ${agent.file ?? "agents/"}; delete the file and run wardrik reload instead.`,
      );
    }
    await this.remove(agent);
  }

  private async remove(agent: AgentRow): Promise<void> {
    const actor = this.actors.get(agent.id);
    this.actors.delete(agent.id);
    if (actor) await actor.close(new TurnStop("cancelled"));
    await this.tools.release({ org: agent.org, agentId: agent.id });
    await this.store.tx(async (w) => {
      await w.emit({ id: agent.id, org: agent.org }, "agent.removed", { name: agent.name });
      await w.run(
        "UPDATE turns SET status = 'cancelled', reason = 'agent removed', ended_at = ? WHERE agent_id = ? AND status IN ('running', 'parked')",
        [w.now, agent.id],
      );
      await w.run("UPDATE inputs SET status = 'dropped' WHERE agent_id = ? AND status = 'queued'", [agent.id]);
      for (const table of ["files", "spend"]) await w.run(`DELETE FROM ${table} WHERE agent_id = ?`, [agent.id]);
      await w.run("DELETE FROM messages WHERE conversation_id IN (SELECT id FROM conversations WHERE agent_id = ?)", [agent.id]);
      await w.run("DELETE FROM conversations WHERE agent_id = ?", [agent.id]);
      await w.run("DELETE FROM agents WHERE id = ?", [agent.id]);
    });
  }

  /** The actor of a usable agent, created (woken) on demand. */
  async actor(agentId: string): Promise<AgentActor> {
    const existing = this.actors.get(agentId);
    if (existing) return existing;
    const row = await this.store.getAgent(agentId);
    if (!row) throw new WardrikError("not_found", `No agent ${agentId}.`);
    let def: AgentDefinition;
    try {
      def = readDefinition(row);
    } catch (err) {
      if (WardrikError.isInstance(err) && row.status !== "unreadable") {
        await this.store.tx(async (w) => {
          await w.run("UPDATE agents SET status = 'unreadable', reason = ? WHERE id = ?", [err.message, row.id]);
          await w.emit({ id: row.id, org: row.org }, "agent.unreadable", { reason: err.message });
        });
      }
      throw err;
    }
    const again = this.actors.get(agentId);
    if (again) return again;
    const actor = new AgentActor(row.id, row.org, def, this.store, this.tools, this.hooks, this.opts);
    actor.onUnreadable = () => {
      if (this.actors.get(agentId) === actor) this.actors.delete(agentId);
    };
    this.actors.set(agentId, actor);
    if (row.status === "asleep" || this.sleeping.delete(agentId)) {
      await this.store.tx(async (w) => {
        await w.emit(actor.ref, "agent.awake", {});
        await actor.refreshStatus(w);
      });
    }
    return actor;
  }

  isAwake(agentId: string): boolean {
    return this.actors.has(agentId);
  }

  // ---- messages and turns ----

  async enqueue(
    agent: AgentRow,
    conversationKey: string,
    text: string,
  ): Promise<{ message: string; conversation: string; conversation_id: string; seq: number }> {
    const actor = await this.actor(agent.id);
    const message = this.store.ids.next("message");
    const { conv, seq } = await this.store.tx(async (w) => {
      const conv = await this.store.conversation(w, agent.id, conversationKey, w.now);
      await w.run("INSERT INTO inputs (id, agent_id, conversation_id, text, status, created_at) VALUES (?, ?, ?, ?, 'queued', ?)", [
        message,
        agent.id,
        conv.id,
        text,
        w.now,
      ]);
      const event = await w.emit(actor.ref, "message.queued", { message, conversation: conversationKey, conversation_id: conv.id, text });
      // An idle conversation starts the turn in the same commit: one fewer write per turn.
      if (
        actor.canStartAt(conv.id) &&
        !(await w.get("SELECT id FROM turns WHERE conversation_id = ? AND status IN ('running', 'parked') LIMIT 1", [conv.id]))
      ) {
        await actor.startTurnIn(w, conv.id, conversationKey, await this.store.queuedInputs(w, conv.id));
      }
      return { conv, seq: event.seq };
    });
    actor.kick(conv.id);
    return { message, conversation: conversationKey, conversation_id: conv.id, seq };
  }

  /** Stops running turns (all, or one conversation's) and drops their queued messages. */
  async cancel(agent: AgentRow, conversationKey?: string): Promise<{ cancelled: string[]; dropped: number }> {
    const actor = await this.actor(agent.id);
    const convId = conversationKey ? (await this.store.findConversation(agent.id, conversationKey))?.id : undefined;
    if (conversationKey && !convId) throw new WardrikError("not_found", `Agent ${agent.name} has no conversation ${conversationKey}.`);
    const turns = (await this.store.openTurns(agent.id)).filter((t) => !convId || t.conversation_id === convId);
    let dropped = 0;
    await this.store.tx(async (w) => {
      for (const t of turns) await actor.finishTurn(w, t, "cancelled", "Cancelled by a person.", null);
      const res = convId
        ? await w.run("UPDATE inputs SET status = 'dropped' WHERE conversation_id = ? AND status = 'queued'", [convId])
        : await w.run("UPDATE inputs SET status = 'dropped' WHERE agent_id = ? AND status = 'queued'", [agent.id]);
      dropped = res.changes;
      if (dropped > 0)
        await w.emit(actor.ref, "messages.dropped", { count: dropped, ...(conversationKey ? { conversation: conversationKey } : {}) });
    });
    for (const t of turns) actor.turnControllers.get(t.id)?.abort(new TurnStop("cancelled"));
    return { cancelled: turns.map((t) => t.id), dropped };
  }

  /** Stops one tool call; the model is told and the turn goes on. */
  async kill(agent: AgentRow, callId: string): Promise<CallRow> {
    const call = await this.store.getCall(callId);
    if (!call || call.agent_id !== agent.id) throw new WardrikError("not_found", `Agent ${agent.name} has no call ${callId}.`);
    const actor = await this.actor(agent.id);
    if (call.status === "running") {
      const controller = actor.callControllers.get(callId);
      if (controller) {
        controller.abort(new Error("killed by a person"));
        return call;
      }
      if (actor.turnControllers.has(call.run)) {
        // Committed as running, not dispatched yet: the dispatch aborts it at once.
        actor.pendingKills.add(callId);
        return call;
      }
    }
    if (call.status === "waiting" || call.status === "planned" || call.status === "approved" || call.status === "running") {
      const turn = (await this.store.getTurn(call.run))!;
      await this.store.tx(async (w) => {
        await w.run("UPDATE calls SET status = 'killed', result = ?, ended_at = ? WHERE id = ?", [
          JSON.stringify("A person stopped this call before it finished."),
          w.now,
          callId,
        ]);
        await w.emit(
          actor.ref,
          "call.killed",
          { call: callId, tool: call.tool, error: "A person stopped this call before it finished." },
          { run: call.run, subject: callId },
        );
        await this.resumeTurnIn(w, actor, turn);
      });
      actor.kick(turn.conversation_id);
      return call;
    }
    throw new WardrikError("conflict", `Call ${callId} is already ${call.status}; only running or waiting calls can be stopped.`);
  }

  async clear(agent: AgentRow, conversationKey?: string): Promise<{ cleared: string[] }> {
    const actor = await this.actor(agent.id);
    const convs = (await this.store.listConversations(agent.id)).filter((c) => !conversationKey || c.key === conversationKey);
    if (conversationKey && convs.length === 0)
      throw new WardrikError("not_found", `Agent ${agent.name} has no conversation ${conversationKey}.`);
    const open = await this.store.openTurns(agent.id);
    const busy = convs.filter((c) => open.some((t) => t.conversation_id === c.id));
    if (busy.length > 0) {
      throw new WardrikError(
        "conflict",
        `Conversation ${busy.map((c) => c.key).join(", ")} has a turn in progress; cancel it first (wardrik agent cancel ${agent.name}).`,
      );
    }
    await this.store.tx(async (w) => {
      for (const c of convs) {
        await w.run("DELETE FROM messages WHERE conversation_id = ?", [c.id]);
        await w.run("UPDATE conversations SET summary = NULL, summary_upto = 0 WHERE id = ?", [c.id]);
        await w.emit(actor.ref, "conversation.cleared", { conversation: c.key, conversation_id: c.id });
      }
    });
    for (const c of convs) actor.forgetPrompt(c.id);
    return { cleared: convs.map((c) => c.key) };
  }

  async approve(agent: AgentRow, callId: string): Promise<CallRow> {
    return this.resolveApproval(agent, callId, "approve");
  }

  async deny(agent: AgentRow, callId: string, reason?: string): Promise<CallRow> {
    return this.resolveApproval(agent, callId, "deny", reason);
  }

  private async resolveApproval(agent: AgentRow, callId: string, verdict: "approve" | "deny", reason?: string): Promise<CallRow> {
    const actor = await this.actor(agent.id);
    const call = await this.store.tx(async (w) => {
      const call = await w.get<CallRow & Record<string, never>>("SELECT * FROM calls WHERE id = ?", [callId]);
      if (!call || call.agent_id !== agent.id) throw new WardrikError("not_found", `Agent ${agent.name} has no call ${callId}.`);
      if (call.status !== "waiting") {
        throw new WardrikError("not_waiting", `Call ${callId} is not waiting for approval (it is ${call.status}).`);
      }
      if (verdict === "approve") {
        await w.run("UPDATE calls SET status = 'approved' WHERE id = ?", [callId]);
        await w.emit(actor.ref, "approval.granted", { call: callId, tool: call.tool }, { run: call.run, subject: callId });
      } else {
        const why = reason?.trim() ? reason.trim() : "No reason given.";
        await w.run("UPDATE calls SET status = 'denied', result = ?, ended_at = ? WHERE id = ?", [
          JSON.stringify(`A person refused this call: ${why}`),
          w.now,
          callId,
        ]);
        await w.emit(actor.ref, "approval.denied", { call: callId, tool: call.tool, reason: why }, { run: call.run, subject: callId });
      }
      const turn = await w.get<TurnRow & Record<string, never>>("SELECT * FROM turns WHERE id = ?", [call.run]);
      if (turn) await this.resumeTurnIn(w, actor, turn);
      return call;
    });
    actor.kick((await this.store.getTurn(call.run))!.conversation_id);
    return (await this.store.getCall(callId))!;
  }

  private async resumeTurnIn(w: Writer, actor: AgentActor, turn: TurnRow): Promise<void> {
    if (turn.status !== "parked") return;
    await w.run("UPDATE turns SET status = 'running' WHERE id = ?", [turn.id]);
    await w.emit(actor.ref, "turn.resumed", {}, { run: turn.id });
    await actor.refreshStatus(w);
  }

  // ---- recovery and sleep ----

  /**
   * Recovery entry point: at start (and when a node takes over an agent),
   * resume every agent's unfinished turns and queued messages.
   */
  async recover(): Promise<void> {
    const rows = await this.store.db.all<{ agent_id: string }>(
      "SELECT DISTINCT agent_id FROM turns WHERE status = 'running' UNION SELECT DISTINCT agent_id FROM inputs WHERE status = 'queued'",
    );
    for (const r of rows) await this.resume(r.agent_id);
  }

  private async resume(agentId: string): Promise<void> {
    const row = await this.store.getAgent(agentId);
    if (!row || row.status === "unreadable") return;
    let actor: AgentActor;
    try {
      actor = await this.actor(agentId);
    } catch (err) {
      if (WardrikError.isInstance(err) && err.code === "unreadable") return;
      throw err;
    }
    const convs = new Set<string>();
    for (const t of await this.store.openTurns(agentId)) if (t.status === "running") convs.add(t.conversation_id);
    for (const c of await this.store.conversationsWithQueuedInput(agentId)) convs.add(c.conversation_id);
    for (const c of convs) actor.kick(c);
  }

  private async sleepIdle(): Promise<void> {
    const now = Date.now();
    let slept = 0;
    for (const actor of [...this.actors.values()]) {
      const idle = actor.def.idle_timeout;
      if (idle === "infinity" || actor.busy || now - actor.lastActive < idle * 1000) continue;
      this.actors.delete(actor.id);
      await actor.close();
      await this.tools.release({ org: actor.org, agentId: actor.id });
      const asleep = await this.store.tx(async (w) => {
        const r = await w.run("UPDATE agents SET status = 'asleep' WHERE id = ? AND status = 'idle'", [actor.id]);
        await w.emit(actor.ref, "agent.asleep", { idle_seconds: idle });
        return r.changes > 0;
      });
      // A parked agent keeps its status; remember it slept so waking says so.
      if (!asleep) this.sleeping.add(actor.id);
      this.store.forget(actor.id, actor.conversationIds());
      slept++;
    }
    // Many agents just let go of their memory: collect now, so the process gives it back.
    if (slept >= 100 && now - this.lastCollect > 10_000) {
      this.lastCollect = now;
      collectGarbage();
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.sleepTimer);
    await Promise.all([...this.actors.values()].map((a) => a.close()));
    this.actors.clear();
  }
}

export function readDefinition(row: AgentRow): AgentDefinition {
  if (row.status === "unreadable" || !row.definition) {
    throw new WardrikError("unreadable", `Agent ${row.name} is unreadable: ${row.reason ?? "no usable definition"}`);
  }
  if (row.format > STATE_FORMAT) {
    throw new WardrikError(
      "unreadable",
      `Agent ${row.name} was saved by a newer Wardrik (state format ${row.format}; this one reads up to ${STATE_FORMAT}).`,
    );
  }
  try {
    return JSON.parse(row.definition) as AgentDefinition;
  } catch (err) {
    throw new WardrikError("unreadable", `Agent ${row.name}'s saved definition cannot be read: ${(err as Error).message}`);
  }
}

let gc: (() => void) | undefined;
/** A full collection (V8's gc, enabled at first use); after a mass sleep it lets RSS shrink. */
function collectGarbage(): void {
  try {
    if (!gc) {
      setFlagsFromString("--expose-gc");
      gc = runInNewContext("gc") as () => void;
    }
    gc();
  } catch {
    // Not available in this runtime: memory is returned by V8 on its own schedule.
  }
}
