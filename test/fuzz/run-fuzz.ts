/**
 * The fuzz loop: a real daemon, the targets of test/fuzz/targets/ in turn,
 * and a seeded generator choosing what each sends, one exchange at a time
 * until the time is up or the daemon dies. The report counts answers
 * by status (per target too) and lists every crash with the input that made it.
 */
import type { FuzzContext, FuzzTarget, Outcome } from "./exchange.js";
import { SECRETS, startFuzzDaemon } from "./fuzz-daemon.js";
import { Random } from "./random.js";
import type { OpenApiDocument } from "./schema-values.js";
import { httpRoutes } from "./targets/http-routes.js";
import { mcpEndpoint } from "./targets/mcp-endpoint.js";
import { slack } from "./targets/slack.js";
import { webhooks } from "./targets/webhooks.js";
import { workerProtocol } from "./targets/worker-protocol.js";

export interface FuzzOptions {
  seconds: number;
  seed: number;
  /** Stop at this many exchanges even if time remains (a reproducible prefix of a seed's run). */
  maxExchanges?: number;
  /** Called with every exchange's outcome (`--trace` prints them). */
  trace?: (outcome: Outcome, exchange: number) => void;
}

export interface FuzzReport {
  seed: number;
  seconds: number;
  exchanges: number;
  by_status: Record<string, number>;
  by_target: Record<string, Record<string, number>>;
  crashes: (Outcome & { exchange: number })[];
  daemon_alive: boolean;
  /** The end of the daemon's log when something crashed. */
  daemon_log_tail?: string;
}

/** Crashes listed in full; more are only counted. */
const MAX_LISTED = 20;

export async function runFuzz(options: FuzzOptions): Promise<FuzzReport> {
  const d = await startFuzzDaemon();
  try {
    const doc = (await (await fetch(`${d.url}/v1/openapi.json`)).json()) as OpenApiDocument;
    const agents = (await (await fetch(`${d.url}/v1/agents`, { headers: { authorization: `Bearer ${d.token}` } })).json()) as {
      agents: { id: string; name: string }[];
    };
    const ctx: FuzzContext = {
      url: d.url,
      token: d.token,
      otherToken: d.otherToken,
      known: {
        id: agents.agents.map((a) => a.id),
        name: [...agents.agents.map((a) => a.name), "deploy", "push"],
        agent: agents.agents.map((a) => a.name),
        org: ["default", "other"],
        key: ["main"],
        conversation: ["main", "fuzz"],
      },
      secrets: SECRETS,
      alive: d.alive,
    };
    const targets: FuzzTarget[] = [httpRoutes(doc), workerProtocol, mcpEndpoint, slack, webhooks];
    const r = new Random(options.seed);
    const report: FuzzReport = {
      seed: options.seed,
      seconds: options.seconds,
      exchanges: 0,
      by_status: {},
      by_target: {},
      crashes: [],
      daemon_alive: true,
    };
    const until = Date.now() + options.seconds * 1000;
    while (Date.now() < until && report.exchanges < (options.maxExchanges ?? Infinity)) {
      // In turn, so a short pass reaches every surface; what each sends is the seed's.
      const target = targets[report.exchanges % targets.length]!;
      const outcome = await target.once(r, ctx);
      report.exchanges++;
      options.trace?.(outcome, report.exchanges);
      report.by_status[outcome.status] = (report.by_status[outcome.status] ?? 0) + 1;
      const mine = (report.by_target[target.name] ??= {});
      mine[outcome.status] = (mine[outcome.status] ?? 0) + 1;
      if (outcome.crash && report.crashes.length < MAX_LISTED) report.crashes.push({ ...outcome, exchange: report.exchanges });
      if (!d.alive()) break;
    }
    report.daemon_alive = d.alive();
    if (report.crashes.length > 0 || !report.daemon_alive) report.daemon_log_tail = d.log().slice(-2_000);
    return report;
  } finally {
    await d.close();
  }
}

/** Whether the run found a crash. */
export function crashed(report: FuzzReport): boolean {
  return report.crashes.length > 0 || !report.daemon_alive;
}
