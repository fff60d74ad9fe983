import { shortType, type EventDataMap, type EventType } from "@wardrik/protocol";
import type { EventBus, StoredEvent } from "../events/event-bus.js";
import type { MetricsQueries } from "../store/metrics-queries.js";
import { toMicros } from "../store/money.js";
import { Registry, type Counter, type Gauge, type Histogram } from "./prometheus-registry.js";

/** How a webhook delivery attempt ended; the only values `wardrik_webhook_deliveries_total` takes. */
export type WebhookOutcome = "delivered" | "failed" | "gave_up";

/**
 * An outside effect Wardrik made again after a node died between its request
 * and storing the answer: a Slack post made while the thread could not be
 * read for the earlier copy, or a webhook delivery sent again (with the same
 * webhook-id, which a Standard Webhooks receiver drops).
 */
export type RepeatedEffect = "slack_post" | "webhook_delivery";

export interface MetricsSources {
  bus: EventBus;
  queries: MetricsQueries;
  /** Open worker connections by org, read at scrape time. */
  workerConnections?: () => ReadonlyMap<string, number>;
  version: string;
}

const AGENT_STATUSES = ["idle", "running", "parked", "asleep", "unreadable"] as const;
/** Turns run from under a second to hours (a turn parked for approval counts its wait). */
const TURN_BUCKETS = [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600, 14_400, 86_400];
const COMMIT_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];
/** Start times of turns that have not ended, kept at most this many (a turn may end on another node). */
const MAX_OPEN_TURNS = 100_000;

/**
 * The daemon's Prometheus metrics. Counters and the turn histogram follow the
 * event record (committed events, from the in-process bus), so they count
 * exactly what the record says happened; gauges of stored state are read from
 * the database when scraped. Labels are bounded: org, agent name, model and
 * tool names from the configuration, outcomes from fixed lists; never
 * conversation, turn or call IDs. The `agent` label holds the agent's ID
 * internally and is written as its name.
 */
export class WardrikMetrics {
  readonly registry = new Registry();
  private readonly turns: Counter;
  private readonly turnSeconds: Histogram;
  private readonly toolCalls: Counter;
  private readonly tokens: Counter;
  private readonly costMicros: Counter;
  private readonly approvalsWaiting: Gauge;
  private readonly agents: Gauge;
  private readonly queueDepth: Gauge;
  private readonly commitSeconds: Histogram;
  private readonly workers: Gauge;
  private readonly webhooks: Counter;
  private readonly repeats: Counter;
  private readonly info: Gauge;
  private readonly openTurns = new Map<string, number>();
  private names = new Map<string, string>();
  private detach: (() => void) | undefined;

  constructor() {
    const r = this.registry;
    this.info = r.gauge("wardrik_build_info", "Always 1; the version label says which Wardrik this is.", ["version"]);
    this.turns = r.counter("wardrik_turns_total", "Turns that ended, by how they ended.", ["org", "agent", "outcome"]);
    this.turnSeconds = r.histogram(
      "wardrik_turn_duration_seconds",
      "Time from a turn's start to its end, including waits for approval.",
      ["org", "agent", "outcome"],
      TURN_BUCKETS,
    );
    this.toolCalls = r.counter(
      "wardrik_tool_calls_total",
      "Tool calls that reached a final state; outcome is completed or the failure code (denied, tool_error, timeout, killed, ...).",
      ["org", "tool", "outcome"],
    );
    this.tokens = r.counter("wardrik_model_tokens_total", "Model tokens, by type: input, output, cached_input.", [
      "org",
      "agent",
      "model",
      "type",
    ]);
    this.costMicros = r.counter(
      "wardrik_cost_usd_total",
      "Spend in US dollars, by source: model tokens or tool cost().",
      ["org", "agent", "source"],
      1_000_000,
    );
    this.approvalsWaiting = r.gauge("wardrik_approvals_waiting", "Tool calls waiting for a person's approval.", ["org", "agent"]);
    this.agents = r.gauge("wardrik_agents", "Agents by status.", ["org", "status"]);
    this.queueDepth = r.gauge("wardrik_queue_depth", "Messages queued and not yet taken by a turn.", ["org", "agent"]);
    this.commitSeconds = r.histogram("wardrik_store_commit_seconds", "Time each committed store transaction took.", [], COMMIT_BUCKETS);
    this.workers = r.gauge("wardrik_worker_connections", "Worker processes connected to this daemon.", ["org"]);
    this.webhooks = r.counter("wardrik_webhook_deliveries_total", "Webhook delivery attempts, by outcome.", ["outcome"]);
    this.repeats = r.counter(
      "wardrik_possible_repeats_total",
      "Outside effects made again after a node died before storing the first one's answer, so the other side may have it twice: Slack posts made while the thread could not be read, webhook deliveries sent again (same webhook-id).",
      ["effect"],
    );
  }

  /** For the store's `onCommit`. */
  readonly commitTook = (seconds: number): void => this.commitSeconds.observe([], seconds);

  /** Counts one webhook delivery attempt (called by the webhook outbox); `possibleRepeat`: a sender that died may have sent it. */
  webhookDelivery(outcome: WebhookOutcome, possibleRepeat = false): void {
    this.webhooks.inc([outcome]);
    if (possibleRepeat) this.possibleRepeat("webhook_delivery");
  }

  /** Counts an effect made again whose first request may have landed (see RepeatedEffect). */
  possibleRepeat(effect: RepeatedEffect): void {
    this.repeats.inc([effect]);
  }

  /** Follows committed events and reads stored state at each scrape. */
  attach(src: MetricsSources): void {
    this.info.set([src.version], 1);
    this.detach = src.bus.subscribe("*", (e) => this.onEvent(e, src.queries));
    this.registry.collect(async () => {
      const rows = await src.queries.agents();
      this.names = new Map(rows.map((a) => [a.id, a.name]));
      for (const g of [this.approvalsWaiting, this.agents, this.queueDepth]) g.reset();
      const byStatus = new Map<string, Map<string, number>>();
      for (const a of rows) {
        let counts = byStatus.get(a.org);
        if (!counts) byStatus.set(a.org, (counts = new Map(AGENT_STATUSES.map((s) => [s, 0]))));
        counts.set(a.status, (counts.get(a.status) ?? 0) + 1);
        this.approvalsWaiting.set([a.org, a.id], a.approvals_waiting);
        this.queueDepth.set([a.org, a.id], a.queued);
      }
      for (const [org, counts] of byStatus) for (const [status, n] of counts) this.agents.set([org, status], n);
      if (src.workerConnections) {
        this.workers.reset();
        for (const [org, n] of src.workerConnections()) this.workers.set([org], n);
      }
    });
  }

  close(): void {
    this.detach?.();
  }

  /** The Prometheus text of every family. */
  render(): Promise<string> {
    return this.registry.render((label, value) => (label === "agent" ? (this.names.get(value) ?? value) : value));
  }

  private onEvent(e: StoredEvent, queries: MetricsQueries): void {
    const type = shortType(e.type);
    const org = e.org;
    switch (type) {
      case "turn.started":
        if (e.run) this.turnStarted(e.run, Date.parse(e.time));
        return;
      case "turn.completed":
      case "turn.failed":
      case "turn.cancelled":
        if (e.run) this.turnEnded(e, type.slice("turn.".length), queries);
        return;
      case "model.replied": {
        const d = dataOf(e, "model.replied");
        this.countTokens(org, e.agent, d.model, d.input_tokens, d.output_tokens, d.cached_tokens);
        this.addCost(org, e.agent, "model", d.cost_usd);
        return;
      }
      case "conversation.compacted": {
        const d = dataOf(e, "conversation.compacted");
        this.countTokens(org, e.agent, d.model, d.input_tokens, d.output_tokens, 0);
        this.addCost(org, e.agent, "model", d.cost_usd);
        return;
      }
      case "call.completed":
        return this.callEnded(e, "completed");
      case "call.failed":
      case "call.killed":
        return this.callEnded(e, (e.data as { code: string }).code);
      case "call.timed_out":
        // A timeout that will be retried is not the call's end.
        if (!dataOf(e, "call.timed_out").will_retry) this.callEnded(e, "timeout");
        return;
      case "approval.denied":
        return this.callEnded(e, "refused");
      case "call.cost_reported":
        this.addCost(org, e.agent, "tool", dataOf(e, "call.cost_reported").cost_usd);
        return;
      default:
        return;
    }
  }

  private turnStarted(run: string, at: number): void {
    if (this.openTurns.size >= MAX_OPEN_TURNS) {
      const oldest = this.openTurns.keys().next().value;
      if (oldest !== undefined) this.openTurns.delete(oldest);
    }
    this.openTurns.set(run, at);
  }

  private turnEnded(e: StoredEvent, outcome: string, queries: MetricsQueries): void {
    const run = e.run!;
    const labels = [e.org, e.agent, outcome];
    this.turns.inc(labels);
    const endedAt = Date.parse(e.time);
    const startedAt = this.openTurns.get(run);
    this.openTurns.delete(run);
    if (startedAt !== undefined) {
      this.turnSeconds.observe(labels, (endedAt - startedAt) / 1000);
      return;
    }
    // Started before this process (a restart) or on another node: the store knows when.
    queries.turnStartedAt(run).then(
      (at) => {
        if (at !== undefined) this.turnSeconds.observe(labels, (endedAt - Date.parse(at)) / 1000);
      },
      () => undefined,
    );
  }

  private callEnded(e: StoredEvent, outcome: string): void {
    const d = e.data as { tool: string; code?: string; cost_usd?: number };
    // A name the model made up is not a tool: one label value for all of them keeps the label bounded.
    const tool = d.code === "unknown_tool" ? "unknown" : d.tool;
    this.toolCalls.inc([e.org, tool, outcome]);
    if (d.cost_usd) this.addCost(e.org, e.agent, "tool", d.cost_usd);
  }

  private countTokens(org: string, agent: string, model: string, input: number, output: number, cached: number): void {
    if (input > 0) this.tokens.inc([org, agent, model, "input"], input);
    if (output > 0) this.tokens.inc([org, agent, model, "output"], output);
    if (cached > 0) this.tokens.inc([org, agent, model, "cached_input"], cached);
  }

  private addCost(org: string, agent: string, source: "model" | "tool", usd: number): void {
    // Summed in whole micro-dollars, as the store keeps money, so the total does not drift.
    if (usd > 0) this.costMicros.inc([org, agent, source], toMicros(usd));
  }
}

/** An event's data as its type says (the bus carries committed events, written through the typed emit). */
function dataOf<T extends EventType>(e: StoredEvent, _type: T): EventDataMap[T] {
  return e.data as unknown as EventDataMap[T];
}
