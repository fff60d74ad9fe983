import type { ReplayBody, ReplayReport } from "@wardrik/protocol";
import type { DaemonClient } from "../daemon-client.js";
import { checkExpectations } from "./assertions.js";
import type { EvalCase, EvalSuite } from "./suite-file.js";

export interface CaseResult {
  name: string;
  /** `message`, or the recorded turn as CONVERSATION#TURN. */
  turn: string;
  pass: boolean;
  /** One line per expectation that failed. */
  failures: string[];
  /** Set when the case could not run (the daemon refused it); the case fails. */
  error?: string;
  cost_usd: number;
  ms: number;
  report?: ReplayReport;
}

/** What every case of a suite shares: the agent, its file as it is now, the tools that may run live. */
export interface SuiteContext {
  client: DaemonClient;
  agentId: string;
  /** The agent file on disk, sent so the cases run the current file rather than the loaded one. */
  agentFile?: { file: string; text: string };
  live: readonly string[];
}

/** Runs the cases one after another, each as a replay on the daemon, and checks what each expects. */
export async function runSuite(suite: EvalSuite, ctx: SuiteContext): Promise<CaseResult[]> {
  const results: CaseResult[] = [];
  for (const c of suite.cases) {
    const started = Date.now();
    const turn = c.from ? `${c.from.conversation}#${c.from.turn}` : "message";
    try {
      const report = await ctx.client.replay(ctx.agentId, caseBody(suite, c, ctx));
      const failures = checkExpectations(c.expect, report);
      results.push({
        name: c.name,
        turn,
        pass: failures.length === 0,
        failures,
        cost_usd: report.cost_usd,
        ms: Date.now() - started,
        report,
      });
    } catch (err) {
      const error = err instanceof Error ? err.message : String(err);
      results.push({ name: c.name, turn, pass: false, failures: [error], error, cost_usd: 0, ms: Date.now() - started });
    }
  }
  return results;
}

function caseBody(suite: EvalSuite, c: EvalCase, ctx: SuiteContext): ReplayBody {
  const judge = c.expect.judge === undefined ? [] : typeof c.expect.judge === "string" ? [c.expect.judge] : c.expect.judge;
  const model = c.model ?? suite.model;
  return {
    ...(c.from
      ? { conversation: c.from.conversation, turns: { from: c.from.turn, to: c.from.turn } }
      : { message: c.message!, ...(c.tools ? { tool_results: c.tools } : {}) }),
    ...(model !== undefined ? { model } : {}),
    ...(ctx.agentFile ? { agent_file: ctx.agentFile } : {}),
    ...(ctx.live.length > 0 ? { live: [...ctx.live] } : {}),
    ...(judge.length > 0 ? { judge: { criteria: judge, ...(suite.judge_model ? { model: suite.judge_model } : {}) } } : {}),
  };
}
