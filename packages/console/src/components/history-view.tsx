import type { HistoryMessage } from "@wardrik/protocol";
import { oneLine } from "../format";
import { contentOf, resultsByCall, type ToolResultPart } from "../history";
import type { EditedCall, LiveCall, LiveTurn } from "../agent-stream";
import { JsonBlock } from "./json-block";
import { StatusBadge } from "./status-badge";

interface HistoryProps {
  messages: HistoryMessage[];
  summary: string | null;
  /** Calls a person approved with edited arguments: they show what they ran with. */
  edits: ReadonlyMap<string, EditedCall>;
}

/** A conversation's history: messages in order, each tool call folded with its arguments and result. */
export function HistoryView({ messages, summary, edits }: HistoryProps) {
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
              {(c.toolCalls ?? []).map((t) => {
                const edited = edits.get(t.callId);
                const call: LiveCall = { call: t.callId, tool: t.tool, args: t.args, status: statusOf(results.get(t.callId)) };
                if (edited) Object.assign(call, { args: edited.edit.args, edit: edited.edit }, edited.by ? { by: edited.by } : {});
                return <ToolCall key={t.callId} call={call} result={results.get(t.callId)} />;
              })}
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
        {call.edit && (
          <span class="tag tag-edited" title={call.by ? `Edited by ${call.by} before approving` : "Edited by a person before approving"}>
            edited
          </span>
        )}{" "}
        <span class="args-line">{oneLine(call.args ?? {}, 80)}</span>
      </summary>
      <div class="tool-body">
        <p class="muted">
          Call <code>{call.call}</code>
          {call.by && ` · ${call.edit ? "edited and approved" : "decided"} by ${call.by}`}
        </p>
        <h4 class="label">{call.edit ? "Arguments (edited before approval; the call ran with these)" : "Arguments"}</h4>
        <JsonBlock value={call.args ?? {}} label={`Arguments of ${call.tool}`} />
        {call.edit && (
          <>
            <h4 class="label">Arguments the model asked for</h4>
            <JsonBlock value={call.edit.original ?? {}} label={`Original arguments of ${call.tool}`} />
          </>
        )}
        <h4 class="label">Result</h4>
        {output === undefined ? <p class="muted">No result yet.</p> : <JsonBlock value={output} label={`Result of ${call.tool}`} />}
      </div>
    </details>
  );
}

/** The turn running now, as it streams: the model's text as it arrives and its calls as they start and end. */
export function LiveTurnView({ turn, onKill }: { turn: LiveTurn; onKill: (call: string) => void }) {
  return (
    <>
      {/* What the turn was asked shows with it, so the history's copy arriving later moves nothing. */}
      {(turn.asked ?? []).map((text, i) => (
        <div key={i} class="msg msg-user">
          <span class="who">Message</span>
          <p class="text">{text}</p>
        </div>
      ))}
      <LiveReply turn={turn} onKill={onKill} />
    </>
  );
}

function LiveReply({ turn, onKill }: { turn: LiveTurn; onKill: (call: string) => void }) {
  return (
    <div class="msg msg-agent msg-live" aria-live="polite" aria-busy={turn.status === "running"}>
      <span class="who">
        Agent <StatusBadge status={turn.status} />
        {/* Beside the status, not after the text: a mark after the text would move each time text arrives before it. */}
        {turn.streaming && <span class="typing" aria-hidden="true" title="The model is writing" />}
      </span>
      {turn.segments.map((text, i) =>
        text === "" ? null : (
          <p key={i} class="text">
            {text}
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
