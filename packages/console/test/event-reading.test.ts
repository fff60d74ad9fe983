/**
 * How the console reads events, without a browser: every event type has a
 * line of its own words (none falls back to raw data), and a turn's timeline
 * puts the steps of the less common paths (a policy's refusal, a call tried
 * again after a timeout, an approval denied or lost, a judge's cost) where
 * they belong. The browser tests cover the common path against a real daemon.
 */
import { EVENT_TYPES, type WardrikCloudEvent } from "@wardrik/protocol";
import { describe, expect, it } from "vitest";
import { decidedBy } from "../src/approval-info.js";
import { describeEvent } from "../src/event-line.js";
import { buildTimeline, type CallStep, type ApprovalStep } from "../src/turn-timeline.js";

let seq = 0;
const RUN = "run_01";
function ev(type: string, data: Record<string, unknown>, second: number): WardrikCloudEvent {
  seq += 1;
  return {
    specversion: "1.0",
    id: `evt_${seq}`,
    source: "/orgs/default/agents/agt_1",
    type: `dev.wardrik.${type}`,
    time: new Date(Date.UTC(2026, 0, 1, 12, 0, second)).toISOString(),
    datacontenttype: "application/json",
    seq,
    run: RUN,
    data,
  };
}

describe("event lines", () => {
  it("every event type reads as words of its own, not as its type and data", () => {
    for (const type of EVENT_TYPES) {
      const line = describeEvent(ev(type, { tool: "files/write", call: "call_1", conversation: "main" }, 0));
      expect(line.text, type).not.toBe(type);
      expect(line.text.length, type).toBeGreaterThan(3);
    }
  });

  it("an approval says who decided, whether they wrote a name or an object, and what they changed", () => {
    const granted = ev(
      "approval.granted",
      { tool: "workers/refund", call: "c", by: "alice", args: { amount: 25 }, original_args: { amount: 250 } },
      0,
    );
    expect(describeEvent(granted)).toMatchObject({
      text: "workers/refund approved by alice with edited arguments",
      detail: '{"amount":25} (the model asked for {"amount":250})',
    });
    const denied = ev(
      "approval.denied",
      { tool: "workers/refund", call: "c", by: { kind: "slack", name: "U123 (Bob)" }, reason: "No." },
      0,
    );
    expect(describeEvent(denied).text).toBe("workers/refund denied by U123 (Bob)");
    expect(decidedBy({ by: "  " })).toBeUndefined();
    expect(decidedBy({})).toBeUndefined();
    expect(describeEvent(ev("approval.granted", { tool: "t", call: "c" }, 0)).text).toBe("t approved");
  });

  it("a question says what was asked, with its choices, and who answered what", () => {
    const asked = ev("question.asked", { tool: "person/ask", call: "c", question: "Roll back?", choices: ["yes", "no"] }, 0);
    expect(describeEvent(asked)).toMatchObject({ text: "Asks a person", detail: "Roll back? · choices: yes | no", tone: "warn" });
    const answered = ev("question.answered", { tool: "person/ask", call: "c", answer: "yes", by: "token:admin" }, 0);
    expect(describeEvent(answered)).toMatchObject({ text: "Answered by token:admin", detail: "yes", tone: "ok" });
  });
});

describe("a turn's timeline", () => {
  it("puts a refusal, a retry, a denial and a judge's cost where they belong, and sums the cost until the turn ends", () => {
    seq = 0;
    const events = [
      ev("turn.started", { conversation: "main", conversation_id: "cnv", messages: ["msg_1"] }, 0),
      ev("model.called", { iteration: 1 }, 0),
      ev("model.replied", { model: "m", iteration: 1, input_tokens: 10, output_tokens: 5, cost_usd: 0.1, text: "", tool_calls: 3 }, 2),
      ev(
        "round.saved",
        {
          round: 1,
          calls: [
            { call: "a", tool: "files/rm", args: { path: "x" } },
            { call: "b", tool: "workers/slow", args: { n: 1 } },
            { call: "c", tool: "workers/pay", args: { usd: 9 } },
          ],
        },
        2,
      ),
      ev(
        "call.decided",
        { call: "a", tool: "files/rm", decision: "deny", rule: "p.yaml:3", reason: "Never delete.", code: "denied", retryable: false },
        2,
      ),
      ev(
        "call.judged",
        {
          call: "b",
          tool: "workers/slow",
          verdict: "allow",
          model: "judge",
          reason: "fine",
          rule: null,
          input_tokens: 1,
          output_tokens: 1,
          cost_usd: 0.02,
        },
        2,
      ),
      ev("call.decided", { call: "b", tool: "workers/slow", decision: "allow", rule: null, reason: "" }, 2),
      ev("call.started", { call: "b", tool: "workers/slow", attempt: 1, idempotency_key: "k" }, 3),
      ev(
        "call.timed_out",
        {
          call: "b",
          tool: "workers/slow",
          error: "late",
          attempt: 1,
          timeout_s: 5,
          will_retry: true,
          cost_usd: 0,
          code: "timeout",
          retryable: true,
        },
        8,
      ),
      ev("call.started", { call: "b", tool: "workers/slow", attempt: 2, idempotency_key: "k" }, 9),
      ev("call.completed", { call: "b", tool: "workers/slow", output: { ok: true }, cost_usd: 0.03 }, 10),
      ev("call.decided", { call: "c", tool: "workers/pay", decision: "ask", rule: "p.yaml:5", reason: "Money." }, 2),
      ev("approval.requested", { call: "c", tool: "workers/pay", args: { usd: 9 }, reason: "Money.", rule: "p.yaml:5" }, 2),
      ev("approval.denied", { call: "c", tool: "workers/pay", reason: "Too much.", by: "bob", code: "denied", retryable: false }, 20),
    ];
    const running = buildTimeline(events.reverse());
    expect(running.status).toBe("running");
    expect(running.cost).toBeCloseTo(0.15, 9);
    expect(running.steps.map((s) => `${s.kind}:${"tool" in s ? s.tool : ""}`)).toEqual([
      "model:",
      "call:files/rm",
      "call:workers/slow",
      "approval:workers/pay",
    ]);
    const refused = running.steps[1] as CallStep;
    expect(refused).toMatchObject({ status: "denied", decision: "denied by rule p.yaml:3", error: "Never delete.", args: { path: "x" } });
    const slow = running.steps[2] as CallStep;
    // From its first start to its end, two attempts, allowed by the judge.
    expect(slow).toMatchObject({ status: "completed", attempts: 2, cost: 0.03, decision: 'allowed by judged "allow" by judge' });
    expect(Date.parse(slow.end!) - Date.parse(slow.start)).toBe(7000);
    const pay = running.steps[3] as ApprovalStep;
    expect(pay).toMatchObject({ outcome: "denied", by: "bob", reason: "Too much.", args: { usd: 9 } });
    expect(pay.edit).toBeUndefined();

    const ended = buildTimeline([
      ...events,
      ev("turn.failed", { conversation_id: "cnv", reason: "gave up", iterations: 1, spend_usd: 0.5, code: "x", retryable: false }, 21),
    ]);
    expect(ended).toMatchObject({ status: "failed", reason: "gave up", cost: 0.5 });
    expect(ended.steps.at(-1)).toMatchObject({ kind: "note", text: "Turn failed", tone: "bad", cost: 0.5 });
  });
});
