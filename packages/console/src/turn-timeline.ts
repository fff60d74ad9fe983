// Imports name .js files: the tests type-check this module under Node's resolution too (tsconfig.tests.json).
import type { WardrikCloudEvent } from "@wardrik/protocol";
import { decidedBy, editOf, type Edit } from "./approval-info.js";
import { shortType } from "./format.js";

/** A model call of the turn: from model.called to its reply (or failure). */
export interface ModelStep {
  kind: "model";
  key: string;
  iteration: number;
  start: string;
  end?: string;
  status: "running" | "completed" | "failed";
  model?: string;
  inputTokens?: number;
  outputTokens?: number;
  cost: number;
  text?: string;
  toolCalls: number;
  error?: string;
}

/** A tool call: from when it started running (or was decided, when it never ran) to its end. */
export interface CallStep {
  kind: "call";
  key: string;
  call: string;
  tool: string;
  /** The arguments it ran with: a person's edit when there was one, else the model's. */
  args: unknown;
  start: string;
  end?: string;
  status: string;
  attempts: number;
  output?: unknown;
  error?: string;
  cost: number;
  /** Which policy rule (or judge) let it run or refused it. */
  decision?: string;
  edit?: Edit;
}

/** A call that waited for a person: from the request to the decision. */
export interface ApprovalStep {
  kind: "approval";
  key: string;
  call: string;
  tool: string;
  /** The arguments the person was shown (the model's). */
  args: unknown;
  start: string;
  end?: string;
  outcome: "waiting" | "approved" | "denied";
  by?: string;
  reason?: string;
  rule?: string;
  lost: boolean;
  edit?: Edit;
}

/** Something else that happened in the turn: its end, a budget stop, a compaction. */
export interface NoteStep {
  kind: "note";
  key: string;
  start: string;
  text: string;
  tone: "ok" | "warn" | "bad" | "plain";
  cost?: number;
}

export type TimelineStep = ModelStep | CallStep | ApprovalStep | NoteStep;

export interface Timeline {
  steps: TimelineStep[];
  start?: string;
  end?: string;
  status?: "running" | "parked" | "completed" | "failed" | "cancelled";
  reason?: string;
  /** What the turn spent, as its end event says; until then the sum of its steps. */
  cost: number;
}

const s = (v: unknown): string => (typeof v === "string" ? v : "");
const n = (v: unknown): number => (typeof v === "number" && Number.isFinite(v) ? v : 0);
const ENDS: Record<string, string> = {
  "call.completed": "completed",
  "call.failed": "failed",
  "call.killed": "killed",
  "call.timed_out": "timed_out",
};

/** A turn's steps in the order they began, from the turn's events (any order; each seq once). */
export function buildTimeline(events: readonly WardrikCloudEvent[]): Timeline {
  const t: Timeline = { steps: [], cost: 0 };
  const planned = new Map<string, unknown>();
  const calls = new Map<string, CallStep>();
  const approvals = new Map<string, ApprovalStep>();
  const judged = new Map<string, string>();
  let model: ModelStep | undefined;
  let spent = 0;

  const callStep = (d: Record<string, unknown>, at: string): CallStep => {
    const id = s(d.call);
    let step = calls.get(id);
    if (!step) {
      const edit = approvals.get(id)?.edit;
      step = {
        kind: "call",
        key: `call-${id}`,
        call: id,
        tool: s(d.tool),
        args: edit ? edit.args : planned.get(id),
        start: at,
        status: "planned",
        attempts: 0,
        cost: 0,
        ...(edit ? { edit } : {}),
      };
      calls.set(id, step);
      t.steps.push(step);
    }
    return step;
  };

  for (const e of [...events].sort((a, b) => a.seq - b.seq)) {
    const d = e.data;
    const type = shortType(e.type);
    if (type === "turn.started") {
      t.start = e.time;
      t.status = "running";
    } else if (type === "turn.parked") t.status = "parked";
    else if (type === "turn.resumed") t.status = "running";
    else if (type === "turn.completed" || type === "turn.failed" || type === "turn.cancelled") {
      t.end = e.time;
      t.status = type === "turn.completed" ? "completed" : type === "turn.failed" ? "failed" : "cancelled";
      if (typeof d.reason === "string") t.reason = d.reason;
      t.cost = n(d.spend_usd);
      const tone = type === "turn.completed" ? "ok" : type === "turn.failed" ? "bad" : "warn";
      t.steps.push({ kind: "note", key: `end-${e.seq}`, start: e.time, text: `Turn ${t.status}`, tone, cost: t.cost });
    } else if (type === "model.called") {
      model = { kind: "model", key: `model-${e.seq}`, iteration: n(d.iteration), start: e.time, status: "running", cost: 0, toolCalls: 0 };
      if (typeof d.model === "string") model.model = d.model;
      t.steps.push(model);
    } else if (type === "model.replied" && model) {
      Object.assign(model, {
        end: e.time,
        status: "completed",
        model: s(d.model) || model.model,
        inputTokens: n(d.input_tokens),
        outputTokens: n(d.output_tokens),
        cost: n(d.cost_usd),
        text: s(d.text),
        toolCalls: n(d.tool_calls),
      });
      spent += n(d.cost_usd);
      model = undefined;
    } else if (type === "model.failed" && model) {
      Object.assign(model, { end: e.time, status: "failed", error: s(d.error) });
      model = undefined;
    } else if (type === "round.saved") {
      for (const c of Array.isArray(d.calls) ? (d.calls as { call?: unknown; args?: unknown }[]) : []) planned.set(s(c.call), c.args);
    } else if (type === "call.judged") {
      judged.set(s(d.call), `judged "${s(d.verdict)}" by ${s(d.model)}`);
      spent += n(d.cost_usd);
    } else if (type === "call.decided") {
      const by = judged.get(s(d.call)) ?? (d.rule ? `rule ${s(d.rule)}` : "the default policy");
      if (d.decision === "allow") callStep(d, e.time).decision = `allowed by ${by}`;
      else if (d.decision === "deny")
        Object.assign(callStep(d, e.time), { status: "denied", end: e.time, decision: `denied by ${by}`, error: s(d.reason) });
    } else if (type === "approval.requested") {
      const step: ApprovalStep = {
        kind: "approval",
        key: `approval-${e.seq}`,
        call: s(d.call),
        tool: s(d.tool),
        args: d.args,
        start: e.time,
        outcome: "waiting",
        lost: d.lost === true,
        ...(typeof d.reason === "string" && d.reason !== "" ? { reason: d.reason } : {}),
        ...(typeof d.rule === "string" ? { rule: d.rule } : {}),
      };
      approvals.set(step.call, step);
      t.steps.push(step);
    } else if (type === "approval.granted" || type === "approval.denied") {
      const step = approvals.get(s(d.call));
      if (!step) continue;
      step.end = e.time;
      step.outcome = type === "approval.granted" ? "approved" : "denied";
      const by = decidedBy(d);
      if (by !== undefined) step.by = by;
      const edit = type === "approval.granted" ? editOf(d) : undefined;
      if (edit) step.edit = edit;
      if (type === "approval.denied" && typeof d.reason === "string") step.reason = d.reason;
    } else if (type === "call.started") {
      const step = callStep(d, e.time);
      // Its duration is the time it ran, from its first start.
      if (step.attempts === 0) step.start = e.time;
      step.attempts = Math.max(step.attempts, n(d.attempt) || 1);
      step.status = "running";
    } else if (ENDS[type]) {
      const step = callStep(d, e.time);
      step.end = e.time;
      step.status = type === "call.timed_out" && d.will_retry === true ? "retrying" : ENDS[type]!;
      if (type === "call.completed") step.output = d.output;
      if (typeof d.error === "string") step.error = d.error;
      step.cost += n(d.cost_usd);
      spent += n(d.cost_usd);
    } else if (type === "call.cost_reported") {
      callStep(d, e.time).cost += n(d.cost_usd);
      spent += n(d.cost_usd);
    } else if (type === "budget.exceeded") {
      t.steps.push({ kind: "note", key: `budget-${e.seq}`, start: e.time, text: `Budget exceeded: ${s(d.reason)}`, tone: "bad" });
    } else if (type === "conversation.compacted") {
      const cost = n(d.cost_usd);
      spent += cost;
      t.steps.push({
        kind: "note",
        key: `compacted-${e.seq}`,
        start: e.time,
        text: `Older messages summarised (${n(d.folded_messages)} folded)`,
        tone: "plain",
        cost,
      });
    }
  }
  if (t.end === undefined) t.cost = spent;
  return t;
}
