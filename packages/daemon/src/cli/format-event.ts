import { shortType, type WardrikCloudEvent } from "@wardrik/protocol";

/** One line per event for `wardrik events`: sequence, time, type, run, the gist of its data. */
export function formatEvent(e: WardrikCloudEvent): string {
  const d = e.data as Record<string, unknown>;
  const type = shortType(e.type);
  const gist = (() => {
    switch (type) {
      case "message.queued":
        return `${String(d.message)} ${clip(String(d.text))}`;
      case "turn.started":
        return `messages ${(d.messages as string[] | undefined)?.join(", ") ?? ""}`;
      case "model.replied":
        return `${String(d.model)} in ${String(d.input_tokens)} out ${String(d.output_tokens)} $${Number(d.cost_usd).toFixed(6)}${Number(d.tool_calls) ? ` tool calls ${String(d.tool_calls)}` : ""}`;
      case "round.saved":
        return `round ${String(d.round)}: ${(d.calls as { tool: string; call: string }[]).map((c) => `${c.tool} ${c.call}`).join(", ")}`;
      case "call.decided":
        return `${String(d.call)} ${String(d.tool)} ${String(d.decision)}: ${String(d.reason)}`;
      case "call.judged":
        return `${String(d.call)} ${String(d.tool)} ${String(d.verdict)} by ${String(d.model)} $${Number(d.cost_usd).toFixed(6)}: ${clip(String(d.reason))}`;
      case "call.started":
        return `${String(d.call)} ${String(d.tool)} attempt ${String(d.attempt)}`;
      case "call.completed":
        return `${String(d.call)} ${String(d.tool)} -> ${clip(JSON.stringify(d.output))}`;
      case "call.failed":
      case "call.killed":
        return `${String(d.call)} ${String(d.tool)}: ${clip(String(d.error))}`;
      case "approval.requested":
        return `${String(d.call)} ${String(d.tool)} ${clip(JSON.stringify(d.args))}: ${String(d.reason)}`;
      case "turn.completed":
        return clip(String(d.reply ?? ""));
      case "turn.failed":
      case "turn.cancelled":
      case "budget.exceeded":
        return String(d.reason ?? "");
      default:
        return clip(JSON.stringify(d));
    }
  })();
  return `${String(e.seq).padStart(5)} ${e.time} ${type.padEnd(20)} ${e.run ?? "-"} ${gist}`;
}

function clip(s: string, n = 120): string {
  const one = s.replace(/\s+/g, " ");
  return one.length > n ? one.slice(0, n - 1) + "…" : one;
}
