import type { ReplayReport } from "@wardrik/protocol";
import { SLASHED, type EvalExpect } from "./suite-file.js";

/**
 * What an eval case expects, checked against the replay of its turn. Each
 * failed expectation is one line that says what was expected and what
 * happened instead; none means the case passed.
 */
export function checkExpectations(expect: EvalExpect, report: ReplayReport): string[] {
  const failures: string[] = [];
  const turn = report.turns.at(-1);
  if (!turn) return ["the replay ran no turn"];
  const { replay } = turn;
  const reply = replay.reply ?? "";
  const made = replay.calls.map((c) => `${c.tool} ${JSON.stringify(c.args)}`);
  if (expect.status !== undefined && replay.status !== expect.status) {
    failures.push(`status: expected ${expect.status}, the turn ${replay.status}${replay.reason ? ` (${replay.reason})` : ""}`);
  }
  if (expect.reply !== undefined && !textMatches(expect.reply, reply)) {
    const how = SLASHED.test(expect.reply) ? `to match ${expect.reply}` : `to contain ${JSON.stringify(expect.reply)}`;
    failures.push(
      `reply: expected it ${how}; it was ${JSON.stringify(clip(reply))}${replay.reason && !replay.reply ? ` (${replay.reason})` : ""}`,
    );
  }
  for (const want of expect.calls ?? []) {
    if (replay.calls.some((c) => c.tool === want.tool && argsMatch(want.args, c.args))) continue;
    const args = want.args === undefined ? "" : ` with arguments matching ${JSON.stringify(want.args)}`;
    failures.push(`calls: expected a call of ${want.tool}${args}; calls made: ${made.length > 0 ? made.join(", ") : "none"}`);
  }
  for (const tool of expect.not_called ?? []) {
    const called = replay.calls.filter((c) => c.tool === tool);
    if (called.length > 0) failures.push(`not_called: ${tool} was called: ${called.map((c) => JSON.stringify(c.args)).join(", ")}`);
  }
  const cost = report.turns.reduce((n, t) => n + t.replay.cost_usd, 0);
  if (expect.max_cost_usd !== undefined && cost > expect.max_cost_usd) {
    failures.push(`max_cost_usd: the turn cost $${cost.toFixed(6)}, over $${expect.max_cost_usd}`);
  }
  if (expect.max_iterations !== undefined && replay.iterations > expect.max_iterations) {
    failures.push(`max_iterations: the turn made ${replay.iterations} model calls, over ${expect.max_iterations}`);
  }
  for (const j of report.judged ?? []) {
    if (!j.pass) failures.push(`judge: ${JSON.stringify(j.criterion)} is not met: ${j.reason}`);
  }
  return failures;
}

/** Text to find in `actual`, or a `/pattern/flags` it must match. */
export function textMatches(expected: string, actual: string): boolean {
  const m = SLASHED.exec(expected);
  return m ? new RegExp(m[1]!, m[2]).test(actual) : actual.includes(expected);
}

/**
 * Whether `actual` holds `expected` as a JSON subset: every key of an
 * expected object matches the same key of the actual one (extra keys are
 * fine), lists match item by item, a string may be a `/pattern/` (tested on
 * the actual value, as JSON when it is not a string), anything else is equal.
 */
export function argsMatch(expected: unknown, actual: unknown): boolean {
  if (expected === undefined) return true;
  if (typeof expected === "string" && SLASHED.test(expected)) {
    return textMatches(expected, typeof actual === "string" ? actual : JSON.stringify(actual));
  }
  if (Array.isArray(expected)) {
    return Array.isArray(actual) && actual.length === expected.length && expected.every((e, i) => argsMatch(e, actual[i]));
  }
  if (expected !== null && typeof expected === "object") {
    if (actual === null || typeof actual !== "object" || Array.isArray(actual)) return false;
    const a = actual as Record<string, unknown>;
    return Object.entries(expected).every(([k, v]) => Object.hasOwn(a, k) && argsMatch(v, a[k]));
  }
  return expected === actual;
}

function clip(text: string): string {
  return text.length > 200 ? `${text.slice(0, 200)}…` : text;
}
