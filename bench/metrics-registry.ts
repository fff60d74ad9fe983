/**
 * `npm run bench -- metrics-registry [TURNS] [ROUNDS]`: the /metrics
 * registry, hand-written (src/metrics/prometheus-registry.ts) against
 * prom-client, on the two paths the daemon runs:
 *
 * - update: what one W1 turn adds (four commit-time observations, the turn's
 *   count and duration, a tool call, input and output tokens, its cost), over
 *   200 agents in 2 orgs; one op is one turn's updates (TURNS a round,
 *   default 200000);
 * - scrape: rendering the text exposition after those series exist, with
 *   the per-agent gauges refreshed by a collector as the daemon's are from the
 *   database; one op is one scrape (TURNS / 1000 a round).
 *
 * Each side has its own registry with the daemon's families (names, labels,
 * buckets). Prints one JSON line.
 */
import client from "prom-client";
import { Registry as HandRegistry } from "../packages/daemon/dist/metrics/prometheus-registry.js";
import { compare, printComparisons } from "./side-by-side.js";

const TURNS = Number(process.argv[2] ?? 200_000);
const ROUNDS = Number(process.argv[3] ?? 6);
const ORGS = ["acme", "globex"];
const AGENTS = Array.from({ length: 200 }, (_, i) => `agent_${String(i).padStart(3, "0")}`);
const TURN_BUCKETS = [0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600, 14_400, 86_400];
const COMMIT_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];

/** What both registries are given per turn: the labels a turn's events carry. */
interface TurnLabels {
  org: string;
  agent: string;
}
const turnsLabels: TurnLabels[] = AGENTS.map((agent, i) => ({ org: ORGS[i % 2]!, agent }));

function handRegistry(): { turn(t: TurnLabels, i: number): void; scrape(): Promise<string> } {
  const r = new HandRegistry();
  const turns = r.counter("wardrik_turns_total", "Turns that ended.", ["org", "agent", "outcome"]);
  const turnSeconds = r.histogram("wardrik_turn_duration_seconds", "Turn time.", ["org", "agent", "outcome"], TURN_BUCKETS);
  const toolCalls = r.counter("wardrik_tool_calls_total", "Tool calls.", ["org", "tool", "outcome"]);
  const tokens = r.counter("wardrik_model_tokens_total", "Tokens.", ["org", "agent", "model", "type"]);
  const cost = r.counter("wardrik_cost_usd_total", "Spend.", ["org", "agent", "source"], 1_000_000);
  const commits = r.histogram("wardrik_store_commit_seconds", "Commit time.", [], COMMIT_BUCKETS);
  const queued = r.gauge("wardrik_queue_depth", "Queued.", ["org", "agent"]);
  const waiting = r.gauge("wardrik_approvals_waiting", "Waiting.", ["org", "agent"]);
  r.collect(() => {
    for (const t of turnsLabels) {
      queued.set([t.org, t.agent], 1);
      waiting.set([t.org, t.agent], 0);
    }
  });
  return {
    turn(t, i) {
      for (let k = 0; k < 4; k++) commits.observe([], 0.0004 + k * 0.0003);
      const labels = [t.org, t.agent, "completed"];
      turns.inc(labels);
      turnSeconds.observe(labels, 1 + (i % 7));
      toolCalls.inc([t.org, "workers/lookup", "completed"]);
      tokens.inc([t.org, t.agent, "anthropic:claude", "input"], 1200);
      tokens.inc([t.org, t.agent, "anthropic:claude", "output"], 80);
      cost.inc([t.org, t.agent, "model"], 312);
    },
    scrape: () => r.render(),
  };
}

function promClientRegistry(): { turn(t: TurnLabels, i: number): void; scrape(): Promise<string> } {
  const r = new client.Registry();
  const registers = [r];
  const turns = new client.Counter({
    name: "wardrik_turns_total",
    help: "Turns that ended.",
    labelNames: ["org", "agent", "outcome"],
    registers,
  });
  const turnSeconds = new client.Histogram({
    name: "wardrik_turn_duration_seconds",
    help: "Turn time.",
    labelNames: ["org", "agent", "outcome"],
    buckets: TURN_BUCKETS,
    registers,
  });
  const toolCalls = new client.Counter({
    name: "wardrik_tool_calls_total",
    help: "Tool calls.",
    labelNames: ["org", "tool", "outcome"],
    registers,
  });
  const tokens = new client.Counter({
    name: "wardrik_model_tokens_total",
    help: "Tokens.",
    labelNames: ["org", "agent", "model", "type"],
    registers,
  });
  const cost = new client.Counter({ name: "wardrik_cost_usd_total", help: "Spend.", labelNames: ["org", "agent", "source"], registers });
  const commits = new client.Histogram({ name: "wardrik_store_commit_seconds", help: "Commit time.", buckets: COMMIT_BUCKETS, registers });
  const waiting = new client.Gauge({ name: "wardrik_approvals_waiting", help: "Waiting.", labelNames: ["org", "agent"], registers });
  new client.Gauge({
    name: "wardrik_queue_depth",
    help: "Queued.",
    labelNames: ["org", "agent"],
    registers,
    collect() {
      for (const t of turnsLabels) {
        this.set({ org: t.org, agent: t.agent }, 1);
        waiting.set({ org: t.org, agent: t.agent }, 0);
      }
    },
  });
  return {
    turn(t, i) {
      for (let k = 0; k < 4; k++) commits.observe(0.0004 + k * 0.0003);
      const labels = { org: t.org, agent: t.agent, outcome: "completed" };
      turns.inc(labels);
      turnSeconds.observe(labels, 1 + (i % 7));
      toolCalls.inc({ org: t.org, tool: "workers/lookup", outcome: "completed" });
      tokens.inc({ org: t.org, agent: t.agent, model: "anthropic:claude", type: "input" }, 1200);
      tokens.inc({ org: t.org, agent: t.agent, model: "anthropic:claude", type: "output" }, 80);
      cost.inc({ org: t.org, agent: t.agent, source: "model" }, 0.000312);
    },
    scrape: () => r.metrics(),
  };
}

const hand = handRegistry();
const lib = promClientRegistry();
const turnsOf =
  (side: { turn(t: TurnLabels, i: number): void }) =>
  (ops: number): void => {
    for (let i = 0; i < ops; i++) side.turn(turnsLabels[i % turnsLabels.length]!, i);
  };
const scrapesOf = (side: { scrape(): Promise<string> }) => async (ops: number) => {
  for (let i = 0; i < ops; i++) if ((await side.scrape()).length < 1000) throw new Error("a scrape came back nearly empty");
};

const update = await compare("update: one W1 turn's metric updates (10 updates, 200 agents)", TURNS, ROUNDS, turnsOf(hand), {
  name: "prom-client 15",
  side: turnsOf(lib),
});
const scrapes = Math.max(20, Math.round(TURNS / 1000));
const scrape = await compare("scrape: render /metrics (about 3,000 series, gauges from a collector)", scrapes, ROUNDS, scrapesOf(hand), {
  name: "prom-client 15",
  side: scrapesOf(lib),
});
printComparisons("metrics-registry", [update, scrape]);
