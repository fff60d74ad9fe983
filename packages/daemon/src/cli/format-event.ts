import type { WardrikCloudEvent } from "@wardrik/protocol";
import { shortType, typedEvent } from "@wardrik/protocol/base";

/** One line per event for `wardrik events`: sequence, time, type, run, the gist of its data. */
export function formatEvent(e: WardrikCloudEvent): string {
  return `${String(e.seq).padStart(5)} ${e.time} ${shortType(e.type).padEnd(20)} ${e.run ?? "-"} ${gist(e)}`;
}

function gist(e: WardrikCloudEvent): string {
  const ev = typedEvent(e);
  if (!ev) return clip(JSON.stringify(e.data));
  switch (ev.type) {
    case "message.queued":
      return `${ev.data.message} ${clip(ev.data.text)}`;
    case "turn.started": {
      const parent = ev.data.parent;
      return `messages ${ev.data.messages.join(", ")}${parent ? ` for ${parent.call} of ${parent.agent} (${parent.run})` : ""}`;
    }
    case "model.replied": {
      const d = ev.data;
      return `${d.model} in ${d.input_tokens} out ${d.output_tokens} $${d.cost_usd.toFixed(6)}${d.tool_calls ? ` tool calls ${d.tool_calls}` : ""}`;
    }
    case "round.saved":
      return `round ${ev.data.round}: ${ev.data.calls.map((c) => `${c.tool} ${c.call}`).join(", ")}`;
    case "call.decided":
      return `${ev.data.call} ${ev.data.tool} ${ev.data.decision}: ${ev.data.reason}`;
    case "call.judged": {
      const d = ev.data;
      return `${d.call} ${d.tool} ${d.verdict} by ${d.model} $${d.cost_usd.toFixed(6)}: ${clip(d.reason)}`;
    }
    case "call.started":
      return `${ev.data.call} ${ev.data.tool} attempt ${ev.data.attempt}${ev.data.child ? ` runs as ${ev.data.child.run} of ${ev.data.child.agent}` : ""}`;
    case "call.completed":
      return `${ev.data.call} ${ev.data.tool} -> ${clip(JSON.stringify(ev.data.output))}`;
    case "call.failed":
    case "call.killed":
      return `${ev.data.call} ${ev.data.tool}: ${clip(ev.data.error)}`;
    case "approval.requested":
      return `${ev.data.call} ${ev.data.tool} ${clip(JSON.stringify(ev.data.args))}: ${ev.data.reason}`;
    case "approval.granted": {
      const { call, tool, by, args, original_args } = ev.data;
      const edited =
        args !== undefined ? ` edited: ${clip(JSON.stringify(args), 60)} (was ${clip(JSON.stringify(original_args), 60)})` : "";
      return `${call} ${tool} approved${by ? ` by ${by}` : ""}${edited}`;
    }
    case "approval.denied":
      return `${ev.data.call} ${ev.data.tool} denied${ev.data.by ? ` by ${ev.data.by}` : ""}: ${ev.data.reason}`;
    case "question.asked":
      return `${ev.data.call} asks: ${clip(ev.data.question)}${ev.data.choices ? ` [${ev.data.choices.join(" | ")}]` : ""}`;
    case "question.answered":
      return `${ev.data.call} answered${ev.data.by ? ` by ${ev.data.by}` : ""}: ${clip(ev.data.answer)}`;
    case "turn.completed":
      return clip(ev.data.reply);
    case "turn.failed":
    case "turn.cancelled":
    case "budget.exceeded":
      return ev.data.reason;
    default:
      return clip(JSON.stringify(ev.data));
  }
}

function clip(s: string, n = 120): string {
  const one = s.replace(/\s+/g, " ");
  return one.length > n ? one.slice(0, n - 1) + "…" : one;
}
