// Imports name .js files: the tests type-check this module under Node's resolution too (tsconfig.tests.json).
import type { WardrikCloudEvent } from "@wardrik/protocol";
import { decidedBy, editOf } from "./approval-info.js";
import { duration, oneLine, shortType, usd } from "./format.js";

/** How an event reads in a list: one line, what follows it in smaller type, and how it should look. */
export interface EventLine {
  text: string;
  detail?: string | undefined;
  tone: "ok" | "warn" | "bad" | "info" | "plain";
  /** What the event cost, when it says. */
  cost?: number | undefined;
}

const s = (v: unknown): string => (typeof v === "string" ? v : v === undefined || v === null ? "" : String(v));
const n = (v: unknown): number => (typeof v === "number" && Number.isFinite(v) ? v : 0);
const args = (v: unknown): string => oneLine(v ?? {}, 100);
const failure = (d: Record<string, unknown>): string => (typeof d.code === "string" ? ` (${d.code})` : "");

/**
 * One readable line per event type. `argsOf` gives a call's arguments where
 * the event does not carry them (call.started); events of a type this console
 * does not know show their data on one line.
 */
export function describeEvent(e: WardrikCloudEvent, argsOf: (call: string) => unknown = () => undefined): EventLine {
  const d = e.data;
  const tool = s(d.tool);
  const type = shortType(e.type);
  switch (type) {
    case "agent.loaded":
      return {
        text: d.source === "api" ? "Agent created through the API" : `Agent loaded${d.file ? ` from ${s(d.file)}` : ""}`,
        tone: "info",
      };
    case "agent.updated":
      return { text: `Agent updated${d.file ? ` from ${s(d.file)}` : ""}`, tone: "info" };
    case "agent.removed":
      return { text: "Agent removed", tone: "warn" };
    case "agent.unreadable":
      return { text: "Agent unreadable", detail: s(d.reason), tone: "bad" };
    case "agent.asleep":
      return { text: `Asleep after ${duration(n(d.idle_seconds) * 1000)} idle`, tone: "plain" };
    case "agent.awake":
      return { text: "Awake", tone: "plain" };
    case "message.queued":
      return { text: `Message for ${s(d.conversation)}`, detail: oneLine(s(d.text), 300), tone: "info" };
    case "messages.dropped":
      return { text: `${n(d.count)} queued message${n(d.count) === 1 ? "" : "s"} dropped`, tone: "warn" };
    case "turn.started": {
      const count = Array.isArray(d.messages) ? d.messages.length : 0;
      return { text: `Turn started in ${s(d.conversation)}${count > 1 ? ` with ${count} messages` : ""}`, tone: "info" };
    }
    case "turn.completed":
      return {
        text: `Turn completed: ${calls(n(d.iterations))}, ${usd(n(d.spend_usd))}`,
        detail: oneLine(s(d.reply), 300) || undefined,
        tone: "ok",
        cost: n(d.spend_usd),
      };
    case "turn.failed":
      return { text: `Turn failed${failure(d)}`, detail: s(d.reason), tone: "bad", cost: n(d.spend_usd) };
    case "turn.cancelled":
      return { text: "Turn cancelled", detail: s(d.reason), tone: "warn", cost: n(d.spend_usd) };
    case "turn.parked": {
      const waiting = Array.isArray(d.waiting) ? d.waiting.length : 0;
      return { text: `Turn waits for a person (${waiting} call${waiting === 1 ? "" : "s"})`, tone: "warn" };
    }
    case "turn.resumed":
      return { text: "Turn resumed", tone: "info" };
    case "model.called":
      return { text: `Model call ${n(d.iteration)} started${d.model ? ` (${s(d.model)})` : ""}`, tone: "plain" };
    case "model.replied": {
      const asked = n(d.tool_calls);
      return {
        text: `Model replied: ${n(d.input_tokens)} tokens in, ${n(d.output_tokens)} out, ${usd(n(d.cost_usd))}`,
        detail:
          s(d.text).trim() !== ""
            ? oneLine(s(d.text), 300)
            : asked > 0
              ? `asks for ${asked} tool call${asked === 1 ? "" : "s"}`
              : undefined,
        tone: "plain",
        cost: n(d.cost_usd),
      };
    }
    case "model.failed":
      return { text: `Model call failed${failure(d)}`, detail: s(d.error), tone: "bad" };
    case "model.fell_back":
      return { text: `Model ${s(d.from)} failed; trying ${s(d.to)}`, detail: s(d.error), tone: "warn" };
    case "output.rejected":
      return {
        text: "Reply does not fit the output schema",
        detail: (Array.isArray(d.problems) ? d.problems.map(s) : []).join("; "),
        tone: "warn",
      };
    case "round.saved": {
      const planned = Array.isArray(d.calls) ? (d.calls as { tool?: unknown; args?: unknown }[]) : [];
      return {
        text: `Round ${n(d.round)}: ${planned.length} tool call${planned.length === 1 ? "" : "s"} planned`,
        detail: planned.map((c) => `${s(c.tool)} ${args(c.args)}`).join(" · "),
        tone: "plain",
      };
    }
    case "call.decided": {
      const verdict = d.decision === "allow" ? "allowed" : d.decision === "ask" ? "needs a person" : "denied";
      return {
        text: `${tool} ${verdict} by ${d.rule ? `rule ${s(d.rule)}` : "the default policy"}`,
        detail: s(d.reason) || undefined,
        tone: d.decision === "deny" ? "bad" : d.decision === "ask" ? "warn" : "plain",
      };
    }
    case "call.judged":
      return {
        text: `${tool} judged "${s(d.verdict)}" by ${s(d.model)}`,
        detail: s(d.error ?? d.reason),
        tone: "plain",
        cost: n(d.cost_usd),
      };
    case "call.started": {
      const a = argsOf(s(d.call));
      const child = d.child as { run?: unknown } | undefined;
      return {
        text: `${tool} started${n(d.attempt) > 1 ? ` (attempt ${n(d.attempt)})` : ""}${child ? ` as turn ${s(child.run)}` : ""}`,
        detail: a === undefined ? undefined : args(a),
        tone: "info",
      };
    }
    case "call.completed":
      return {
        text: `${tool} completed${n(d.cost_usd) > 0 ? `, ${usd(n(d.cost_usd))}` : ""}`,
        detail: oneLine(d.output ?? null, 200),
        tone: "ok",
        cost: n(d.cost_usd),
      };
    case "call.failed":
      return { text: `${tool} failed${failure(d)}`, detail: s(d.error), tone: "bad", cost: n(d.cost_usd) };
    case "call.killed":
      return { text: `${tool} killed`, detail: s(d.error), tone: "warn" };
    case "call.timed_out":
      return {
        text: `${tool} timed out after ${duration(n(d.timeout_s) * 1000)}${d.will_retry ? "; it will be tried again" : ""}`,
        tone: "bad",
      };
    case "call.retried":
      return { text: `${tool} tried again (attempt ${n(d.attempt)})`, detail: s(d.reason), tone: "warn" };
    case "call.cost_reported":
      return { text: `${tool} reported a cost of ${usd(n(d.cost_usd))}`, tone: "plain", cost: n(d.cost_usd) };
    case "approval.requested":
      return {
        text: d.lost ? `${tool} waits for a person again: its answer was lost` : `${tool} waits for approval`,
        detail: [s(d.reason), args(d.args)].filter(Boolean).join(" · "),
        tone: "warn",
      };
    case "approval.granted": {
      const edit = editOf(d);
      const by = decidedBy(d);
      return {
        text: `${tool} approved${by ? ` by ${by}` : ""}${edit ? " with edited arguments" : ""}`,
        detail: edit ? `${args(edit.args)} (the model asked for ${args(edit.original)})` : undefined,
        tone: "ok",
      };
    }
    case "approval.denied": {
      const by = decidedBy(d);
      return { text: `${tool} denied${by ? ` by ${by}` : ""}`, detail: s(d.reason) || undefined, tone: "bad" };
    }
    case "question.asked": {
      const choices = Array.isArray(d.choices) ? d.choices.map(s) : [];
      return {
        text: "Asks a person",
        detail: [s(d.question), choices.length > 0 ? `choices: ${choices.join(" | ")}` : ""].filter(Boolean).join(" · "),
        tone: "warn",
      };
    }
    case "question.answered": {
      const by = decidedBy(d);
      return { text: `Answered${by ? ` by ${by}` : ""}`, detail: s(d.answer), tone: "ok" };
    }
    case "budget.exceeded":
      return { text: "Budget exceeded", detail: s(d.reason), tone: "bad" };
    case "conversation.compacted":
      return {
        text: `Conversation compacted: ${n(d.folded_messages)} messages summarised, ${usd(n(d.cost_usd))}`,
        tone: "plain",
        cost: n(d.cost_usd),
      };
    case "conversation.cleared":
      return { text: `Conversation ${s(d.conversation)} cleared`, tone: "warn" };
    case "conversation.forked":
      return {
        text: `Conversation ${s(d.conversation)} forked from ${s(d.from)} at event ${n(d.at_seq)}`,
        detail: `${n(d.turns)} turns, ${n(d.messages)} messages copied${d.open_run ? `; turn ${s(d.open_run)} was still running and left out` : ""}`,
        tone: "info",
      };
    default:
      return { text: type, detail: oneLine(d, 200), tone: "plain" };
  }
}

function calls(count: number): string {
  return `${count} model call${count === 1 ? "" : "s"}`;
}
