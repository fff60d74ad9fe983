import type { HistoryMessage } from "@wardrik/protocol";
import { oneLine } from "../format";
import { contentOf, resultsByCall, type ToolResultPart } from "../history";
import type { LiveCall, LiveTurn } from "../agent-stream";
import { JsonBlock } from "./json-block";
import { StatusBadge } from "./status-badge";

/** A conversation's history: messages in order, each tool call folded with its arguments and result. */
export function HistoryView({ messages, summary }: { messages: HistoryMessage[]; summary: string | null }) {
  const results = resultsByCall(messages);
  return (
    <>
      {summary && (
        <details class="msg msg-summary">
          <summary>Older messages were summarised for the model</summary>
          <p class="text">{summary}</p>
        </details>
      )}
      {messages.map((m) => {
        const c = contentOf(m);
        if (c.role === "user")
          return (
            <div key={m.seq} class="msg msg-user">
              <span class="who">Message</span>
              <p class="text">{c.text}</p>
            </div>
          );
        if (c.role === "assistant")
          return (
            <div key={m.seq} class="msg msg-agent">
              <span class="who">Agent</span>
              {c.text.trim() !== "" && <p class="text">{c.text}</p>}
              {(c.toolCalls ?? []).map((t) => (
                <ToolCall
                  key={t.callId}
                  call={{ call: t.callId, tool: t.tool, args: t.args, status: statusOf(results.get(t.callId)) }}
                  result={results.get(t.callId)}
                />
              ))}
            </div>
          );
        return null;
      })}
    </>
  );
}

function statusOf(r: ToolResultPart | undefined): string {
  if (!r) return "running";
  return r.isError ? "failed" : "completed";
}

/** One tool call, folded to a line; unfolding shows its arguments and its result. */
export function ToolCall({ call, result }: { call: LiveCall; result?: ToolResultPart | undefined }) {
  const output = result ? result.output : (call.output ?? call.error);
  return (
    <details class="tool-call">
      <summary>
        <span class="tool">{call.tool}</span> <StatusBadge status={call.status} />{" "}
        <span class="args-line">{oneLine(call.args ?? {}, 80)}</span>
      </summary>
      <div class="tool-body">
        <p class="muted">
          Call <code>{call.call}</code>
        </p>
        <h4 class="label">Arguments</h4>
        <JsonBlock value={call.args ?? {}} label={`Arguments of ${call.tool}`} />
        <h4 class="label">Result</h4>
        {output === undefined ? <p class="muted">No result yet.</p> : <JsonBlock value={output} label={`Result of ${call.tool}`} />}
      </div>
    </details>
  );
}

/** The turn running now, as it streams: the model's text as it arrives and its calls as they start and end. */
export function LiveTurnView({ turn, onKill }: { turn: LiveTurn; onKill: (call: string) => void }) {
  return (
    <div class="msg msg-agent msg-live" aria-live="polite" aria-busy={turn.status === "running"}>
      <span class="who">
        Agent <StatusBadge status={turn.status} />
      </span>
      {turn.segments.map((text, i) =>
        text === "" ? null : (
          <p key={i} class="text">
            {text}
            {i === turn.segments.length - 1 && turn.streaming && <span class="caret" aria-hidden="true" />}
          </p>
        ),
      )}
      {turn.calls.map((c) => (
        <div key={c.call} class="live-call">
          <ToolCall call={c} />
          {c.status === "running" && (
            <button type="button" class="small danger" onClick={() => onKill(c.call)} aria-label={`Kill ${c.tool} call ${c.call}`}>
              Kill
            </button>
          )}
        </div>
      ))}
      {turn.reason && turn.status !== "completed" && <p class="error">{turn.reason}</p>}
    </div>
  );
}
