import type { LanguageModelV3FunctionTool } from "@ai-sdk/provider";
import type { AgentDefinition } from "../config/types.js";
import type { Logger } from "../log/logger.js";
import { PromptCache } from "../models/build-prompt.js";
import {
  chooseSplit,
  COMPACTION_INSTRUCTIONS,
  COMPACTION_THRESHOLD,
  countTokens,
  KEEP_RECENT_SHARE,
  loadTokenizer,
  messageText,
  transcript,
} from "../models/compaction.js";
import type { CallRow, NewCall, Store, TurnRow, Writer } from "../store/store.js";
import { FINAL_CALL_STATUSES, STATE_FORMAT, StateError } from "../store/store.js";
import type { ResolvedTool, ToolRegistry } from "../tools/tool-registry.js";
import { compileToolPattern } from "../policy/match-tool.js";
import { fromModelToolName, toModelToolName, type ToolOutcome } from "../tools/toolset.js";
import { callModel, ModelCallError, type ModelReply } from "./call-model.js";
import type { StoredMessage, ToolResultPart } from "./messages.js";
import { LOST_ANSWER, type BudgetCaps, type ResolvedModelRef, type RuntimeHooks } from "./types.js";

export const MAX_PARALLEL_CALLS = 8;

export interface ActorOptions {
  toolTimeoutMs: number;
  /** Test hook for model retry backoff. */
  modelBackoffMs?: number;
  log: Logger;
}

/** Why a running turn was interrupted; the AbortSignal's reason. */
export class TurnStop extends Error {
  constructor(readonly why: "cancelled" | "timeout" | "shutdown" | "budget") {
    super(`turn ${why}`);
  }
}

class StaleTurn extends Error {}

interface Runner {
  again: boolean;
  done: Promise<void>;
}

/**
 * One awake agent: its conversation runners, prompt caches and the abort
 * controllers of running turns and calls. Everything here can be rebuilt
 * from the store, which is what recovery and waking do.
 */
export class AgentActor {
  private readonly runners = new Map<string, Runner>();
  private readonly prompts = new Map<string, PromptCache>();
  readonly turnControllers = new Map<string, AbortController>();
  /** Turns picked up from the store (recovery, approval) rather than started here. */
  private readonly resumed = new Set<string>();
  /** The iteration whose model.called is already recorded, per running turn. */
  private readonly announced = new Map<string, number>();
  readonly callControllers = new Map<string, AbortController>();
  /** Kills that arrived between a call's commit as running and its dispatch. */
  readonly pendingKills = new Set<string>();
  private closed = false;
  lastActive = Date.now();

  constructor(
    readonly id: string,
    readonly org: string,
    public def: AgentDefinition,
    private readonly store: Store,
    private readonly tools: ToolRegistry,
    private readonly hooks: RuntimeHooks,
    private readonly opts: ActorOptions,
  ) {}

  get ref() {
    return { id: this.id, org: this.org };
  }

  get busy(): boolean {
    return this.runners.size > 0 || this.callControllers.size > 0;
  }

  /** Makes sure a runner works through the conversation's open turn and queued input. */
  kick(conversationId: string): void {
    if (this.closed) return;
    this.lastActive = Date.now();
    const existing = this.runners.get(conversationId);
    if (existing) {
      existing.again = true;
      return;
    }
    const runner: Runner = { again: true, done: Promise.resolve() };
    runner.done = (async () => {
      try {
        while (runner.again && !this.closed) {
          runner.again = false;
          await this.runConversation(conversationId);
        }
      } catch (err) {
        this.opts.log("error", "conversation runner failed", { agent: this.id, conversation: conversationId, err: String(err) });
      } finally {
        this.runners.delete(conversationId);
        this.lastActive = Date.now();
      }
    })();
    this.runners.set(conversationId, runner);
  }

  /** Conversations this actor has touched (for dropping per-conversation caches when it sleeps). */
  conversationIds(): string[] {
    return [...new Set([...this.prompts.keys(), ...this.runners.keys()])];
  }

  /** Drops cached prompts (history cleared, compaction, sleep). */
  forgetPrompt(conversationId?: string): void {
    if (conversationId) this.prompts.delete(conversationId);
    else this.prompts.clear();
  }

  async close(reason: TurnStop = new TurnStop("shutdown")): Promise<void> {
    this.closed = true;
    for (const c of this.turnControllers.values()) c.abort(reason);
    await Promise.allSettled([...this.runners.values()].map((r) => r.done));
  }

  private async runConversation(conversationId: string): Promise<void> {
    while (!this.closed) {
      let turn = await this.store.openTurnOf(conversationId);
      if (turn?.status === "parked") return;
      if (turn && !this.turnControllers.has(turn.id) && !this.announced.has(turn.id)) this.resumed.add(turn.id);
      turn ??= await this.startTurn(conversationId);
      if (!turn) return;
      await this.driveTurn(turn);
    }
  }

  private async startTurn(conversationId: string): Promise<TurnRow | undefined> {
    return this.store.tx(async (w) => {
      const inputs = await this.store.queuedInputs(w, conversationId);
      if (inputs.length === 0) return undefined;
      const conv = await this.store.getConversation(conversationId);
      return this.startTurnIn(w, conversationId, conv?.key ?? conversationId, inputs);
    });
  }

  /**
   * Whether a message just queued may start its turn in the same transaction:
   * only when nothing drives the conversation (the caller re-checks for an open
   * turn inside the transaction).
   */
  canStartAt(conversationId: string): boolean {
    return !this.closed && !this.runners.has(conversationId);
  }

  /** Starts a turn that takes `inputs`, inside the caller's transaction. */
  async startTurnIn(w: Writer, conversationId: string, key: string, inputs: { id: string; text: string }[]): Promise<TurnRow> {
    const run = this.store.ids.next("run");
    await w.run("INSERT INTO turns (id, agent_id, conversation_id, status, started_at) VALUES (?, ?, ?, 'running', ?)", [
      run,
      this.id,
      conversationId,
      w.now,
    ]);
    for (const input of inputs) {
      await w.run("UPDATE inputs SET status = 'claimed', run = ? WHERE id = ?", [run, input.id]);
      const message: StoredMessage = { role: "user", text: input.text, input: input.id };
      const seq = await this.store.appendMessage(w, conversationId, run, message, w.now);
      this.prompts.get(conversationId)?.push({ seq, run, message });
    }
    await this.store.setAgentStatus(w, this.id, "running");
    await w.emit(
      this.ref,
      "turn.started",
      { conversation: key, conversation_id: conversationId, messages: inputs.map((i) => i.id) },
      { run },
    );
    await this.announceModelCall(w, run, 1);
    return {
      id: run,
      agent_id: this.id,
      conversation_id: conversationId,
      status: "running",
      reason: null,
      reply: null,
      iterations: 0,
      rounds: 0,
      rounds_done: 0,
      spend_usd: 0,
      format: STATE_FORMAT,
      started_at: w.now,
      ended_at: null,
    };
  }

  private async prompt(conversationId: string): Promise<PromptCache> {
    let cache = this.prompts.get(conversationId);
    if (!cache) {
      const conv = await this.store.getConversation(conversationId);
      cache = new PromptCache(await this.store.history(conversationId, conv?.summary_upto ?? 0), conv?.summary ?? null);
      this.prompts.set(conversationId, cache);
    }
    return cache;
  }

  /** Inside a runner transaction: the turn must still be ours to advance. */
  private async assertRunning(w: Writer, run: string): Promise<void> {
    const row = await w.get<{ status: string }>("SELECT status FROM turns WHERE id = ?", [run]);
    if (row?.status !== "running") throw new StaleTurn(`turn ${run} is ${row?.status ?? "gone"}`);
  }

  private async appendMessage(w: Writer, conversationId: string, run: string, message: StoredMessage): Promise<void> {
    const seq = await this.store.appendMessage(w, conversationId, run, message, w.now);
    this.prompts.get(conversationId)?.push({ seq, run, message });
  }

  /** Advances a turn from whatever state the store holds: fresh, resumed after approval, or recovered. */
  async driveTurn(initial: TurnRow): Promise<void> {
    let turn = initial;
    const controller = new AbortController();
    this.turnControllers.set(turn.id, controller);
    // close() aborts the controllers it finds; a turn that starts after it must stop too.
    if (this.closed) controller.abort(new TurnStop("shutdown"));
    const deadline = Date.parse(turn.started_at) + this.def.timeout * 1000;
    const timer = setTimeout(() => controller.abort(new TurnStop("timeout")), Math.max(0, deadline - Date.now()));
    const signal = controller.signal;
    if (turn.format > STATE_FORMAT) {
      clearTimeout(timer);
      this.turnControllers.delete(turn.id);
      await this.markUnreadable(
        `Turn ${turn.id} was saved by a newer Wardrik (state format ${turn.format}; this one reads up to ${STATE_FORMAT}).`,
      );
      return;
    }
    // Calls this process marked running when it saved their round: start them, don't treat them as interrupted.
    let fresh = new Set<string>();
    try {
      for (;;) {
        if (signal.aborted) throw signal.reason;
        if (turn.rounds > turn.rounds_done) {
          const outcome = await this.executeRound(turn, signal, fresh);
          fresh = new Set();
          if (outcome === "parked") return;
          turn = { ...turn, rounds_done: turn.rounds };
          continue;
        }
        if (turn.iterations >= this.def.max_iterations) {
          await this.endTurn(
            turn,
            "failed",
            `The turn reached max_iterations (${this.def.max_iterations} model calls) without a final answer.`,
          );
          return;
        }
        const step = await this.modelStep(turn, signal);
        if (step === "ended") return;
        turn = step.turn;
        fresh = step.fresh;
      }
    } catch (err) {
      if (err instanceof StaleTurn) return;
      if (err instanceof StateError) {
        await this.markUnreadable(err.message);
        return;
      }
      const reason = signal.aborted ? signal.reason : undefined;
      if (reason instanceof TurnStop) {
        if (reason.why === "timeout") {
          await this.endTurn(turn, "failed", `The turn took longer than its timeout of ${this.def.timeout} s.`);
        }
        // cancelled: Runtime.cancel already ended it; shutdown: recovery resumes it.
        return;
      }
      if (err instanceof ModelCallError) {
        await this.endTurn(turn, "failed", `The model call failed: ${err.message}`, "model.failed");
        return;
      }
      this.opts.log("error", "turn failed unexpectedly", { agent: this.id, run: turn.id, err: String(err) });
      await this.endTurn(turn, "failed", `Internal error: ${err instanceof Error ? err.message : String(err)}`);
    } finally {
      clearTimeout(timer);
      this.turnControllers.delete(turn.id);
      this.announced.delete(turn.id);
      this.resumed.delete(turn.id);
    }
  }

  /**
   * One model call. Its reply commits in one transaction with the model.called
   * and model.replied events and, when it asks for tools, the whole round:
   * every call with its policy decision, allowed calls already marked running.
   */
  private async modelStep(turn: TurnRow, signal: AbortSignal): Promise<{ turn: TurnRow; fresh: Set<string> } | "ended"> {
    const resolved = this.hooks.resolveModel(this.def.model, this.def);
    const caps = this.hooks.budget(this.def);
    let tools = await this.tools.resolve(this.def.tools, { org: this.org, agentId: this.id });
    if (this.resumed.delete(turn.id) && turn.rounds > 0) {
      // After a restart: offer the model the tools this turn used, once their workers are back.
      const used = (await this.store.turnCalls(turn.id)).map((c) => toModelToolName(c.tool));
      const before = tools.size;
      await this.waitForMissingTools(used, tools);
      if (tools.size !== before) tools = await this.tools.resolve(this.def.tools, { org: this.org, agentId: this.id });
    }
    let cache = await this.prompt(turn.conversation_id);
    if (await this.maybeCompact(turn, resolved, cache, signal)) cache = await this.prompt(turn.conversation_id);
    const prompt = cache.build(this.def.instructions);
    const sentMessages = cache.length;
    if (caps.per_day_usd !== undefined || caps.per_turn_usd !== undefined) {
      // What the prompt alone will cost: a model call that would pass a cap is not made.
      const estimate = resolved.price ? (estimateTokens(prompt) * resolved.price.input) / 1_000_000 : 0;
      const over = await this.budgetReason(turn, caps, estimate);
      if (over) {
        await this.stopForBudget(turn, caps, over, "model call");
        return "ended";
      }
    }
    const iteration = turn.iterations + 1;
    if (this.announced.get(turn.id) !== iteration) {
      // Not announced by the commit before (a resumed or recovered turn): record the call before making it.
      await this.store.tx(async (w) => {
        await this.assertRunning(w, turn.id);
        await this.announceModelCall(w, turn.id, iteration);
      });
    }
    const reply = await callModel({
      model: resolved.model,
      prompt,
      tools: [...tools.values()].map(toFunctionTool),
      signal,
      retries: this.def.retries,
      price: resolved.price,
      ...(this.opts.modelBackoffMs !== undefined ? { backoffMs: this.opts.modelBackoffMs } : {}),
      ...(this.hooks.onDelta
        ? {
            onDelta: (d: string) => this.hooks.onDelta?.(this.id, turn.id, d),
            // Text streamed by a failed attempt is void: followers are told to drop it.
            onRetry: () => this.hooks.onDelta?.(this.id, turn.id, "", true),
          }
        : {}),
    });
    cache.recordUsage(reply.usage.input, sentMessages);
    const day = today(this.store.clock.now());
    const replied = {
      model: resolved.ref,
      iteration,
      messages: prompt.length,
      input_tokens: reply.usage.input,
      output_tokens: reply.usage.output,
      cached_tokens: reply.usage.cached,
      cost_usd: reply.costUsd,
      finish_reason: reply.finishReason,
      text: reply.text,
      tool_calls: reply.toolCalls.length,
    };
    const recordReply = async (w: Writer, rounds: number) => {
      await this.assertRunning(w, turn.id);
      await w.run("UPDATE turns SET iterations = ?, rounds = ?, spend_usd = spend_usd + ? WHERE id = ?", [
        iteration,
        rounds,
        reply.costUsd,
        turn.id,
      ]);
      await this.store.addSpend(w, this.id, day, reply.costUsd, 0);
      await w.emit(this.ref, "model.replied", replied, { run: turn.id });
    };
    if (reply.toolCalls.length === 0) {
      await this.store.tx(async (w) => {
        await recordReply(w, turn.rounds);
        await this.appendMessage(w, turn.conversation_id, turn.id, { role: "assistant", text: reply.text, toolCalls: [] });
        await this.finishTurn(w, turn, "completed", null, reply.text);
      });
      return "ended";
    }
    const round = turn.rounds + 1;
    await this.waitForMissingTools(
      reply.toolCalls.map((tc) => tc.toolName),
      tools,
    );
    const calls = reply.toolCalls.map((tc) => this.planCall(tc, tools));
    // Spend so far includes this reply: tool calls past a cap are refused and the turn ends.
    const over = await this.budgetReason(turn, caps, reply.costUsd);
    for (const c of calls) this.decideNew(c, over);
    await this.store.tx(async (w) => {
      await recordReply(w, round);
      await this.appendMessage(w, turn.conversation_id, turn.id, {
        role: "assistant",
        text: reply.text,
        toolCalls: calls.map((c) => ({ modelCallId: c.modelCallId, callId: c.id, tool: c.tool, args: c.args })),
      });
      await this.store.insertCalls(w, turn.id, this.id, round, calls, w.now);
      await w.emit(
        this.ref,
        "round.saved",
        { round, calls: calls.map((c) => ({ call: c.id, tool: c.tool, args: c.args, read_only: c.readOnly, idempotent: c.idempotent })) },
        { run: turn.id },
      );
      for (const c of calls) await this.emitDecision(w, turn.id, c);
      if (over) {
        await w.emit(this.ref, "budget.exceeded", { reason: over, refused: "tool calls", ...caps }, { run: turn.id });
        await this.finishTurn(w, turn, "failed", over, null);
      } else if (calls.every((c) => c.status === "failed" || c.status === "denied")) {
        await this.completeRound(w, turn, round);
      }
    });
    if (over) return "ended";
    return {
      turn: { ...turn, iterations: iteration, rounds: round, spend_usd: turn.spend_usd + reply.costUsd },
      fresh: new Set(calls.filter((c) => c.status === "running").map((c) => c.id)),
    };
  }

  /**
   * Folds the older part of the conversation into a summary when the next
   * prompt would pass the threshold share of the context window. The full
   * history stays in the store; only the model's view changes.
   */
  private async maybeCompact(turn: TurnRow, resolved: ResolvedModelRef, cache: PromptCache, signal: AbortSignal): Promise<boolean> {
    const window = this.def.context_window ?? resolved.contextWindow;
    if (!window) return false;
    const threshold = window * COMPACTION_THRESHOLD;
    let estimate = cache.estimateTokens(this.def.instructions);
    if (estimate < threshold * 0.5) return false;
    await loadTokenizer();
    cache.recount();
    estimate = cache.estimateTokens(this.def.instructions);
    if (estimate < threshold) return false;

    const conv = await this.store.getConversation(turn.conversation_id);
    const entries = await this.store.history(turn.conversation_id, conv?.summary_upto ?? 0);
    const split = chooseSplit(entries, window * KEEP_RECENT_SHARE, (e) => countTokens(messageText(e.message)));
    if (split <= 0) return false;
    const folded = entries.slice(0, split);
    const previous = conv?.summary ? `Summary so far:\n${conv.summary}\n\nWhat happened next:\n` : "";
    const reply = await callModel({
      model: resolved.model,
      prompt: [
        { role: "system", content: COMPACTION_INSTRUCTIONS },
        { role: "user", content: [{ type: "text", text: previous + transcript(folded) }] },
      ],
      tools: [],
      signal,
      retries: this.def.retries,
      price: resolved.price,
      ...(this.opts.modelBackoffMs !== undefined ? { backoffMs: this.opts.modelBackoffMs } : {}),
    });
    const summary = reply.text.trim();
    if (!summary) return false;
    const upto = folded[folded.length - 1]!.seq;
    await this.store.tx(async (w) => {
      await this.assertRunning(w, turn.id);
      await w.run("UPDATE conversations SET summary = ?, summary_upto = ? WHERE id = ?", [summary, upto, turn.conversation_id]);
      await w.run("UPDATE turns SET spend_usd = spend_usd + ? WHERE id = ?", [reply.costUsd, turn.id]);
      await this.store.addSpend(w, this.id, today(this.store.clock.now()), reply.costUsd, 0);
      await w.emit(
        this.ref,
        "conversation.compacted",
        {
          conversation_id: turn.conversation_id,
          folded_messages: folded.length,
          from_seq: folded[0]!.seq,
          upto_seq: upto,
          kept_messages: entries.length - folded.length,
          tokens_before: estimate,
          context_window: window,
          summary,
          model: resolved.ref,
          input_tokens: reply.usage.input,
          output_tokens: reply.usage.output,
          cost_usd: reply.costUsd,
        },
        { run: turn.id },
      );
    });
    this.forgetPrompt(turn.conversation_id);
    return true;
  }

  /**
   * A tool the model names that this agent may use but nobody serves yet (a
   * worker still reconnecting after a restart): wait for it, up to the call
   * timeout, and add it to `tools`, instead of failing the call as unknown.
   */
  private async waitForMissingTools(modelNames: string[], tools: Map<string, ResolvedTool>): Promise<void> {
    const scope = { org: this.org, agentId: this.id };
    for (const modelName of new Set(modelNames)) {
      if (tools.has(modelName)) continue;
      const full = fromModelToolName(modelName);
      if (!this.def.tools.some((p) => compileToolPattern(p)(full))) continue;
      const found = await this.tools.findOrWait(full, scope, this.opts.toolTimeoutMs);
      if (found) tools.set(modelName, found);
    }
  }

  private planCall(tc: ModelReply["toolCalls"][number], tools: Map<string, ResolvedTool>): NewCall {
    const tool = tools.get(tc.toolName);
    let args: unknown;
    let invalid: string | undefined;
    try {
      args = tc.input === "" ? {} : JSON.parse(tc.input);
    } catch {
      invalid = tc.input;
      args = {};
    }
    const call: NewCall = {
      id: this.store.ids.next("call"),
      modelCallId: tc.toolCallId,
      tool: tool?.name ?? fromModelToolName(tc.toolName),
      args,
      readOnly: tool?.readOnly ?? false,
      idempotent: tool?.idempotent ?? false,
    };
    if (!tool) {
      Object.assign(call, { status: "failed", result: `Unknown tool ${call.tool}. ${availableToolsText(tools)}` });
    } else if (invalid !== undefined) {
      Object.assign(call, { status: "failed", result: `The arguments were not valid JSON: ${invalid.slice(0, 200)}` });
    }
    return call;
  }

  /** The policy decision of a new call, made as its round is saved. */
  private decideNew(c: NewCall, overBudget: string | undefined): void {
    if (c.status === "failed") return;
    if (overBudget) {
      Object.assign(c, { status: "denied", decision: "deny", reason: overBudget, result: `Refused: ${overBudget}` });
      return;
    }
    const d = this.hooks.decide({
      agent: { ...this.def, id: this.id, org: this.org },
      tool: c.tool,
      args: c.args,
      readOnly: c.readOnly,
      idempotent: c.idempotent,
    });
    c.decision = d.decision;
    c.reason = d.reason;
    c.rule = d.ruleSource ?? null;
    if (d.decision === "allow") c.status = "running";
    else if (d.decision === "ask") c.status = "waiting";
    else Object.assign(c, { status: "denied", result: `Denied by policy: ${d.reason}` });
  }

  private async emitDecision(w: Writer, run: string, c: NewCall | (CallRow & { args: unknown })): Promise<void> {
    const opts = { run, subject: c.id };
    if (c.status === "failed") {
      await w.emit(this.ref, "call.failed", { call: c.id, tool: c.tool, cost_usd: 0, error: c.result }, opts);
      return;
    }
    await w.emit(
      this.ref,
      "call.decided",
      { call: c.id, tool: c.tool, decision: c.decision, reason: c.reason, rule: c.rule ?? null },
      opts,
    );
    if (c.status === "waiting") {
      await w.emit(
        this.ref,
        "approval.requested",
        { call: c.id, tool: c.tool, args: c.args, reason: c.reason, rule: c.rule ?? null },
        opts,
      );
    } else if (c.status === "running") {
      await w.emit(this.ref, "call.started", { call: c.id, tool: c.tool, attempt: 1, idempotency_key: c.id }, opts);
    }
  }

  /**
   * Records `model.called` in the commit that makes the call the next step
   * (turn start, a round's last result), so the record shows a call in flight
   * without a commit of its own.
   */
  private async announceModelCall(w: Writer, run: string, iteration: number): Promise<void> {
    let model: string | undefined;
    try {
      model = this.hooks.resolveModel(this.def.model, this.def).ref;
    } catch {
      model = this.def.model;
    }
    await w.emit(this.ref, "model.called", { model, iteration }, { run });
    this.announced.set(run, iteration);
  }

  /** Appends a round's results to the history once every call is final (idempotent). */
  private async completeRound(w: Writer, turn: TurnRow, round: number): Promise<void> {
    const row = await w.get<{ rounds_done: number }>("SELECT rounds_done FROM turns WHERE id = ?", [turn.id]);
    if (!row || row.rounds_done >= round) return;
    // Cheap check first: most calls of a parallel round finish while others still run.
    const open = await w.get<{ n: number }>(
      "SELECT COUNT(*) AS n FROM calls WHERE run = ? AND round = ? AND status NOT IN ('completed', 'failed', 'denied', 'killed')",
      [turn.id, round],
    );
    if ((open?.n ?? 0) > 0) return;
    const calls = await w.all<CallRow & Record<string, never>>("SELECT * FROM calls WHERE run = ? AND round = ? ORDER BY position", [
      turn.id,
      round,
    ]);
    const results: ToolResultPart[] = calls.map((c) => ({
      modelCallId: c.model_call_id,
      callId: c.id,
      tool: c.tool,
      isError: c.status !== "completed",
      output: c.result === null ? null : parseStored(c.result, `call ${c.id} result`),
    }));
    await this.appendMessage(w, turn.conversation_id, turn.id, { role: "tool", results });
    await w.run("UPDATE turns SET rounds_done = ? WHERE id = ?", [round, turn.id]);
    // The next step is a model call unless the turn has used its iterations: say so in this same commit.
    const it = await w.get<{ iterations: number }>("SELECT iterations FROM turns WHERE id = ?", [turn.id]);
    if (it && it.iterations < this.def.max_iterations) await this.announceModelCall(w, turn.id, it.iterations + 1);
  }

  /** Runs every call of the turn's last round that is not final; "parked" when some wait for a person. */
  private async executeRound(turn: TurnRow, signal: AbortSignal, fresh: Set<string>): Promise<"done" | "parked"> {
    const round = turn.rounds;
    for (;;) {
      const calls = await this.store.roundCalls(turn.id, round);
      const open = calls.filter((c) => !FINAL_CALL_STATUSES.has(c.status) && c.status !== "waiting");
      if (open.length > 0) {
        await runLimited(open, MAX_PARALLEL_CALLS, (c) => this.executeCall(turn, c, signal, fresh.has(c.id)));
        fresh.clear();
        if (signal.aborted) throw signal.reason;
        continue;
      }
      if (calls.some((c) => c.status === "waiting")) {
        const parked = await this.store.tx(async (w) => {
          await this.assertRunning(w, turn.id);
          // A decision may have landed since the calls were read: park only if some call still waits and none is ready.
          const counts = await w.get<{ ready: number; waiting: number }>(
            "SELECT SUM(status IN ('planned', 'approved')) AS ready, SUM(status = 'waiting') AS waiting FROM calls WHERE run = ? AND round = ?",
            [turn.id, round],
          );
          if ((counts?.ready ?? 0) > 0 || (counts?.waiting ?? 0) === 0) return false;
          await w.run("UPDATE turns SET status = 'parked' WHERE id = ?", [turn.id]);
          await this.refreshStatus(w);
          const waiting = calls.filter((c) => c.status === "waiting").map((c) => c.id);
          await w.emit(this.ref, "turn.parked", { round, waiting }, { run: turn.id });
          return true;
        });
        if (parked) return "parked";
        continue;
      }
      const row = await this.store.getTurn(turn.id);
      if ((row?.rounds_done ?? 0) < round) {
        await this.store.tx(async (w) => {
          await this.assertRunning(w, turn.id);
          await this.completeRound(w, turn, round);
        });
      }
      return "done";
    }
  }

  private async executeCall(turn: TurnRow, call: CallRow, turnSignal: AbortSignal, isFresh: boolean): Promise<void> {
    if (turnSignal.aborted) return;
    const scope = { org: this.org, agentId: this.id };
    // After a restart a worker may not have reconnected yet: wait for it (up to the call timeout) rather than fail.
    const tool = isFresh ? await this.tools.find(call.tool, scope) : await this.tools.findOrWait(call.tool, scope, this.opts.toolTimeoutMs);
    const args: unknown = parseStored(call.args, `call ${call.id} arguments`);

    if (call.status === "planned") {
      // A round saved before decisions were made at save time; decide now.
      const tools = await this.tools.resolve(this.def.tools, scope);
      const c: NewCall = {
        id: call.id,
        modelCallId: call.model_call_id,
        tool: call.tool,
        args,
        readOnly: call.read_only === 1,
        idempotent: call.idempotent === 1,
      };
      if (!tool || !tools.has(tool.modelName))
        Object.assign(c, { status: "failed", result: `Unknown tool ${call.tool}. ${availableToolsText(tools)}` });
      else this.decideNew(c, await this.budgetReason(turn, this.hooks.budget(this.def), 0));
      await this.store.tx(async (w) => {
        await this.assertRunning(w, turn.id);
        const final = c.status === "failed" || c.status === "denied";
        await w.run("UPDATE calls SET status = ?, decision = ?, reason = ?, rule = ?, result = ?, ended_at = ? WHERE id = ?", [
          c.status === "running" ? "approved" : c.status!,
          c.decision ?? null,
          c.reason ?? null,
          c.rule ?? null,
          c.result === undefined ? null : JSON.stringify(c.result),
          final ? w.now : null,
          call.id,
        ]);
        await this.emitDecision(w, turn.id, { ...c, status: c.status === "running" ? "approved" : c.status } as NewCall);
      });
      if (c.status === "running" && tool) await this.runCall(turn, { ...call, status: "approved" }, tool, args, turnSignal);
      return;
    }
    if (call.status === "approved") {
      if (!tool) {
        await this.finishCall(turn, call, "failed", `Tool ${call.tool} is no longer available.`, 0);
        return;
      }
      await this.runCall(turn, call, tool, args, turnSignal);
      return;
    }
    if (call.status === "running") {
      if (isFresh && tool) {
        await this.dispatch(turn, call, tool, args, turnSignal, call.attempts);
        return;
      }
      // Interrupted mid-call (crash, lost node). Repeat only what is safe to repeat.
      if (tool && (call.read_only === 1 || call.idempotent === 1)) {
        await this.runCall(turn, call, tool, args, turnSignal);
      } else {
        await this.askAfterLoss(turn, call, args);
      }
    }
  }

  private async askAfterLoss(turn: TurnRow, call: CallRow, args: unknown): Promise<void> {
    await this.store.tx(async (w) => {
      await this.assertRunning(w, turn.id);
      await w.run("UPDATE calls SET status = 'waiting', decision = 'ask', reason = ? WHERE id = ?", [LOST_ANSWER, call.id]);
      await w.emit(
        this.ref,
        "approval.requested",
        { call: call.id, tool: call.tool, args, reason: LOST_ANSWER, rule: null, lost: true },
        {
          run: turn.id,
          subject: call.id,
        },
      );
    });
  }

  /** Marks a call running (a new attempt) and dispatches it. */
  private async runCall(turn: TurnRow, call: CallRow, tool: ResolvedTool, args: unknown, turnSignal: AbortSignal): Promise<void> {
    const attempt = call.attempts + 1;
    await this.store.tx(async (w) => {
      await this.assertRunning(w, turn.id);
      await w.run(
        "UPDATE calls SET status = 'running', decision = COALESCE(decision, 'allow'), attempts = ?, started_at = ? WHERE id = ?",
        [attempt, w.now, call.id],
      );
      await w.emit(
        this.ref,
        "call.started",
        { call: call.id, tool: call.tool, attempt, idempotency_key: call.idempotency_key },
        {
          run: turn.id,
          subject: call.id,
        },
      );
    });
    await this.dispatch(turn, call, tool, args, turnSignal, attempt);
  }

  private async dispatch(
    turn: TurnRow,
    call: CallRow,
    tool: ResolvedTool,
    args: unknown,
    turnSignal: AbortSignal,
    attempt: number,
  ): Promise<void> {
    const controller = new AbortController();
    const onTurnAbort = () => controller.abort(turnSignal.reason);
    turnSignal.addEventListener("abort", onTurnAbort, { once: true });
    this.callControllers.set(call.id, controller);
    if (this.pendingKills.delete(call.id)) controller.abort(new CallStop("killed"));
    // The runtime owns the timeout, whatever the toolset does with its signal.
    const timer = setTimeout(() => controller.abort(new CallStop("timeout")), this.opts.toolTimeoutMs);
    let cost = 0;
    let outcome: ToolOutcome;
    try {
      outcome = controller.signal.aborted
        ? stoppedOutcome(controller.signal, this.opts.toolTimeoutMs)
        : await Promise.race([
            tool.toolset.call(tool.local, args, {
              agent: this.id,
              org: this.org,
              run: turn.id,
              callId: call.id,
              idempotencyKey: call.idempotency_key,
              signal: controller.signal,
              timeoutMs: this.opts.toolTimeoutMs,
              cost: (usd: number) => {
                if (Number.isFinite(usd) && usd > 0) cost += usd;
              },
            }),
            abortedOutcome(controller.signal, this.opts.toolTimeoutMs),
          ]);
    } catch (err) {
      outcome = { ok: false, kind: "failed", error: `The tool failed: ${err instanceof Error ? err.message : String(err)}` };
    } finally {
      clearTimeout(timer);
      turnSignal.removeEventListener("abort", onTurnAbort);
      this.callControllers.delete(call.id);
    }
    if (turnSignal.aborted) {
      // The turn was cancelled or timed out; the stopping code records the end.
      if (cost > 0) await this.recordLateCost(turn, call, cost);
      return;
    }
    if (!outcome.ok && outcome.kind === "lost") {
      if (cost > 0) await this.recordLateCost(turn, call, cost);
      await this.askAfterLoss(turn, { ...call, attempts: attempt }, args);
      return;
    }
    if (!outcome.ok && outcome.kind === "timeout") {
      await this.finishCall(turn, call, "failed", outcome.error, cost);
      return;
    }
    if (!outcome.ok && (outcome.kind === "killed" || controller.signal.aborted)) {
      await this.finishCall(turn, call, "killed", "A person stopped this call before it finished.", cost);
      return;
    }
    if (outcome.ok) {
      let serialised: string;
      try {
        serialised = JSON.stringify(outcome.output ?? null);
      } catch (err) {
        await this.finishCall(
          turn,
          call,
          "failed",
          `The tool returned a result that is not JSON-serialisable: ${(err as Error).message}`,
          cost,
        );
        return;
      }
      await this.finishCall(turn, call, "completed", JSON.parse(serialised), cost);
    } else {
      await this.finishCall(turn, call, "failed", outcome.error, cost);
    }
  }

  private async recordLateCost(turn: TurnRow, call: CallRow, cost: number): Promise<void> {
    await this.store.tx(async (w) => {
      await this.store.addSpend(w, this.id, today(this.store.clock.now()), 0, cost);
      await w.run("UPDATE calls SET cost_usd = cost_usd + ? WHERE id = ?", [cost, call.id]);
      await w.emit(this.ref, "call.cost_reported", { call: call.id, tool: call.tool, cost_usd: cost }, { run: turn.id, subject: call.id });
    });
  }

  /** Stores a call's outcome; the last call of a round also appends the round's results. */
  private async finishCall(
    turn: TurnRow,
    call: CallRow,
    status: "completed" | "failed" | "killed",
    output: unknown,
    cost: number,
  ): Promise<void> {
    await this.store.tx(async (w) => {
      await this.assertRunning(w, turn.id);
      await w.run("UPDATE calls SET status = ?, result = ?, cost_usd = cost_usd + ?, ended_at = ? WHERE id = ?", [
        status,
        JSON.stringify(output),
        cost,
        w.now,
        call.id,
      ]);
      if (cost > 0) {
        await this.store.addSpend(w, this.id, today(this.store.clock.now()), 0, cost);
        await w.run("UPDATE turns SET spend_usd = spend_usd + ? WHERE id = ?", [cost, turn.id]);
      }
      const type = status === "completed" ? "call.completed" : status === "killed" ? "call.killed" : "call.failed";
      const data: Record<string, unknown> = { call: call.id, tool: call.tool, cost_usd: cost };
      if (status === "completed") data.output = output;
      else data.error = output;
      await w.emit(this.ref, type, data, { run: turn.id, subject: call.id });
      await this.completeRound(w, turn, call.round);
    });
  }

  /** Why spending `extra` more would pass a cap, or undefined when it fits. */
  private async budgetReason(turn: TurnRow, caps: BudgetCaps, extra: number): Promise<string | undefined> {
    if (caps.per_day_usd === undefined && caps.per_turn_usd === undefined) return undefined;
    const spent = await this.store.spendOn(this.id, today(this.store.clock.now()));
    const day = spent.model_usd + spent.tools_usd;
    const row = await this.store.getTurn(turn.id);
    const turnSpend = row?.spend_usd ?? 0;
    if (caps.per_day_usd !== undefined && (day >= caps.per_day_usd || day + extra > caps.per_day_usd)) {
      return `The agent's daily budget of $${caps.per_day_usd} would be passed (spent $${day.toFixed(4)} today).`;
    }
    if (caps.per_turn_usd !== undefined && (turnSpend >= caps.per_turn_usd || turnSpend + extra > caps.per_turn_usd)) {
      return `The turn's budget of $${caps.per_turn_usd} would be passed (spent $${turnSpend.toFixed(4)} in this turn).`;
    }
    return undefined;
  }

  /** Ends the turn with a budget.exceeded event. */
  private async stopForBudget(turn: TurnRow, caps: BudgetCaps, reason: string, what: string): Promise<void> {
    await this.store.tx(async (w) => {
      const row = await w.get<{ status: string }>("SELECT status FROM turns WHERE id = ?", [turn.id]);
      if (row?.status !== "running") return;
      await w.emit(this.ref, "budget.exceeded", { reason, refused: what, ...caps }, { run: turn.id });
      await this.finishTurn(w, turn, "failed", reason, null);
    });
  }

  async endTurn(
    turn: TurnRow,
    status: "completed" | "failed" | "cancelled",
    reason: string | null,
    extraEvent?: "model.failed",
  ): Promise<void> {
    await this.store.tx(async (w) => {
      const row = await w.get<{ status: string }>("SELECT status FROM turns WHERE id = ?", [turn.id]);
      if (row?.status !== "running" && row?.status !== "parked") return;
      if (extraEvent) await w.emit(this.ref, extraEvent, { error: reason }, { run: turn.id });
      await this.finishTurn(w, turn, status, reason, null);
    });
  }

  /** Ends a turn inside a transaction: open calls are closed, the status and event written. */
  async finishTurn(
    w: Writer,
    turn: TurnRow,
    status: "completed" | "failed" | "cancelled",
    reason: string | null,
    reply: string | null,
  ): Promise<void> {
    await w.run("UPDATE turns SET status = ?, reason = ?, reply = ?, ended_at = ? WHERE id = ?", [status, reason, reply, w.now, turn.id]);
    if (status !== "completed") {
      const open = await w.all<{ id: string; tool: string }>(
        "SELECT id, tool FROM calls WHERE run = ? AND status NOT IN ('completed', 'failed', 'denied', 'killed')",
        [turn.id],
      );
      for (const c of open) {
        await w.run("UPDATE calls SET status = 'killed', result = ?, ended_at = ? WHERE id = ?", [
          JSON.stringify(`The turn ended: ${reason}`),
          w.now,
          c.id,
        ]);
        await w.emit(
          this.ref,
          "call.killed",
          { call: c.id, tool: c.tool, error: `The turn ended: ${reason}` },
          { run: turn.id, subject: c.id },
        );
      }
    }
    await this.refreshStatus(w);
    const type = status === "completed" ? "turn.completed" : status === "failed" ? "turn.failed" : "turn.cancelled";
    const spend = await w.get<{ spend_usd: number; iterations: number }>("SELECT spend_usd, iterations FROM turns WHERE id = ?", [turn.id]);
    await w.emit(
      this.ref,
      type,
      {
        conversation_id: turn.conversation_id,
        ...(reply !== null ? { reply } : {}),
        ...(reason !== null ? { reason } : {}),
        iterations: spend?.iterations ?? 0,
        spend_usd: spend?.spend_usd ?? 0,
      },
      { run: turn.id },
    );
  }

  /** Saved state this version cannot use: the agent stops, says why, and the others go on. */
  async markUnreadable(reason: string): Promise<void> {
    this.closed = true;
    this.opts.log("error", "agent state is unreadable", { agent: this.id, reason });
    await this.store.tx(async (w) => {
      await w.run("UPDATE agents SET status = 'unreadable', reason = ? WHERE id = ?", [reason, this.id]);
      await w.emit(this.ref, "agent.unreadable", { reason });
    });
    this.onUnreadable?.();
  }

  /** Set by the runtime to drop this actor when its state turns out unreadable. */
  onUnreadable: (() => void) | undefined;

  /** Recomputes the agent's stored status from its open turns. */
  async refreshStatus(w: Writer): Promise<void> {
    const rows = await w.all<{ status: string }>(
      "SELECT DISTINCT status FROM turns WHERE agent_id = ? AND status IN ('running', 'parked')",
      [this.id],
    );
    const status = rows.some((r) => r.status === "running") ? "running" : rows.length > 0 ? "parked" : "idle";
    await w.run("UPDATE agents SET status = ? WHERE id = ? AND status != 'unreadable'", [status, this.id]);
  }
}

export function parseStored(text: string, what: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw new StateError(`The saved ${what} cannot be read: ${(err as Error).message}`);
  }
}

/** Why a single call was stopped: the AbortSignal's reason. */
class CallStop extends Error {
  constructor(readonly why: "killed" | "timeout") {
    super(`call ${why}`);
  }
}

function stoppedOutcome(signal: AbortSignal, timeoutMs: number): ToolOutcome {
  const reason: unknown = signal.reason;
  if (reason instanceof CallStop && reason.why === "timeout") {
    return { ok: false, kind: "timeout", error: `The call timed out after ${timeoutMs / 1000} s.` };
  }
  return { ok: false, kind: "killed", error: "A person stopped this call before it finished." };
}

/** Settles when the signal aborts, so a toolset that ignores its signal cannot hold a turn. */
function abortedOutcome(signal: AbortSignal, timeoutMs: number): Promise<ToolOutcome> {
  return new Promise((resolve) => signal.addEventListener("abort", () => resolve(stoppedOutcome(signal, timeoutMs)), { once: true }));
}

/** A rough token count of a prompt (4 characters a token), for budget estimates before a call. */
function estimateTokens(prompt: unknown[]): number {
  let chars = 0;
  for (const m of prompt) chars += JSON.stringify(m).length;
  return Math.ceil(chars / 4);
}

function availableToolsText(tools: Map<string, ResolvedTool>): string {
  const names = [...tools.keys()];
  return names.length === 0 ? "This agent has no tools." : `Available tools: ${names.join(", ")}.`;
}

function toFunctionTool(t: ResolvedTool): LanguageModelV3FunctionTool {
  return {
    type: "function",
    name: t.modelName,
    description: t.description,
    inputSchema: t.inputSchema as LanguageModelV3FunctionTool["inputSchema"],
  };
}

export function today(d: Date): string {
  return d.toISOString().slice(0, 10);
}

async function runLimited<T>(items: T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await fn(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}
