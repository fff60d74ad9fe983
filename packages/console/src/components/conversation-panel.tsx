import type { AgentDetail } from "@wardrik/protocol";
import { useEffect, useLayoutEffect, useRef, useState } from "preact/hooks";
import type { AgentStream } from "../agent-stream";
import { messageOf } from "../client/api";
import { useApi } from "../context";
import { shortType } from "../format";
import { loadHistory, type HistoryView as History } from "../history";
import { ConversationPicker } from "./conversation-picker";
import { HistoryView, LiveTurnView } from "./history-view";
import { NewConversation } from "./new-conversation";

interface Props {
  detail: AgentDetail;
  stream: AgentStream;
  /** The conversation shown (the agent's page keeps it, so the turns list shows the same one). */
  conversation: string;
  onConversation: (key: string) => void;
  onChanged: () => void;
}

/**
 * One conversation: its history, the turn running now as it streams, and the
 * message box. The history scrolls inside a box of fixed height, so text
 * arriving at its end never moves anything else on the page.
 */
export function ConversationPanel({ detail, stream, conversation: key, onConversation: setKey, onChanged }: Props) {
  const api = useApi();
  const keys = detail.conversations.map((c) => c.key);
  const [starting, setStarting] = useState(false);
  // The history of which conversation: until the one picked arrives, the one before must not show under its name.
  const [history, setHistory] = useState<History & { key?: string }>({ messages: [], summary: null });
  const [settled, setSettled] = useState<Set<string>>(() => new Set());
  const [text, setText] = useState("");
  const [busy, setBusy] = useState<string>();
  const [error, setError] = useState<string>();
  const [confirmClear, setConfirmClear] = useState(false);
  const scroller = useRef<HTMLDivElement>(null);
  const atEnd = useRef(true);
  const loads = useRef(0);
  const exists = keys.includes(key);
  const open = detail.conversations.find((c) => c.key === key)?.status;
  const running = open === "running" || open === "parked";

  const reload = async () => {
    // Answers can arrive out of order (a switch while one loads): only the latest load may show.
    const load = ++loads.current;
    if (!exists) return setHistory({ key, messages: [], summary: null });
    const ended = [...stream.turns.values()].filter((t) => t.conversation === key && !["running", "parked"].includes(t.status));
    try {
      const h = await loadHistory(api, detail.id, key);
      if (load !== loads.current) return;
      // The history now holds what the ended turns said: show it instead of their live view, in one render.
      setHistory({ ...h, key });
      setSettled((s) => new Set([...s, ...ended.map((t) => t.run)]));
    } catch (e) {
      if (load === loads.current) setError(messageOf(e));
    }
  };

  useEffect(() => void reload(), [key, exists]);
  useEffect(
    () =>
      stream.onEventOf((e) => {
        const type = shortType(e.type);
        if (type === "turn.completed" || type === "turn.failed" || type === "turn.cancelled" || type === "conversation.cleared")
          void reload();
      }),
    [stream, key, exists],
  );

  const live = [...stream.turns.values()].filter((t) => t.conversation === key && !settled.has(t.run));
  // A turn still shown live already shows what the history saved of it so far (its rounds, and its messages when it
  // knows their text): show those once, live.
  const liveRuns = new Set(live.map((t) => t.run));
  const liveAsked = new Set(live.filter((t) => t.asked !== undefined).map((t) => t.run));
  const loaded = history.key === key;
  const shown = (loaded ? history.messages : []).filter(
    (m) => m.run === undefined || !liveRuns.has(m.run) || (m.role === "user" && !liveAsked.has(m.run)),
  );

  // Follow the end of the conversation while the reader is there; leave them alone when they scrolled up.
  useLayoutEffect(() => {
    const el = scroller.current;
    if (el && atEnd.current) el.scrollTop = el.scrollHeight;
  });

  const act = async (what: string, fn: () => Promise<unknown>) => {
    setBusy(what);
    setError(undefined);
    try {
      await fn();
      onChanged();
    } catch (e) {
      setError(messageOf(e));
    } finally {
      setBusy(undefined);
    }
  };

  const send = (e: Event) => {
    e.preventDefault();
    const message = text.trim();
    if (message === "") return setError("Write a message first.");
    atEnd.current = true;
    void act("send", async () => {
      await api.sendMessage(detail.id, key, message);
      setText("");
    });
  };

  return (
    <div class="conversation">
      <div class="toolbar">
        <ConversationPicker id="conversation-key" keys={keys} value={key} onChange={setKey} />
        <button type="button" aria-expanded={starting} disabled={detail.status === "unreadable"} onClick={() => setStarting(!starting)}>
          New conversation
        </button>
        <button
          type="button"
          disabled={!running || busy !== undefined}
          onClick={() => void act("cancel", () => api.cancel(detail.id, key))}
        >
          Cancel turn
        </button>
        {confirmClear ? (
          <span class="confirm" role="group" aria-label="Clear the history?">
            <button
              type="button"
              class="danger"
              onClick={() => void act("clear", () => api.clear(detail.id, key)).then(() => setConfirmClear(false))}
            >
              Clear {key}'s history
            </button>
            <button type="button" onClick={() => setConfirmClear(false)}>
              Keep it
            </button>
          </span>
        ) : (
          <button type="button" disabled={!exists || running || busy !== undefined} onClick={() => setConfirmClear(true)}>
            Clear history
          </button>
        )}
      </div>
      {starting && (
        <NewConversation
          agentId={detail.id}
          keys={keys}
          onClose={() => setStarting(false)}
          onStarted={(k) => {
            setStarting(false);
            atEnd.current = true;
            setKey(k);
            onChanged();
          }}
        />
      )}

      <div
        class="history"
        ref={scroller}
        tabIndex={0}
        role="log"
        aria-label={`History of conversation ${key}`}
        onScroll={(e) => {
          const el = e.currentTarget as HTMLDivElement;
          atEnd.current = el.scrollHeight - el.scrollTop - el.clientHeight < 40;
        }}
      >
        {!loaded ? (
          <p class="muted" role="status">
            Loading {key}…
          </p>
        ) : shown.length === 0 && live.length === 0 ? (
          <p class="muted">No messages in {key} yet.</p>
        ) : (
          <HistoryView messages={shown} summary={history.summary} edits={stream.edits} />
        )}
        {live.map((t) => (
          <LiveTurnView key={t.run} turn={t} onKill={(call) => void act("kill", () => api.decide(detail.id, call, "kill"))} />
        ))}
      </div>

      <form class="message-box" onSubmit={send}>
        <label for="message">Message</label>
        <div class="message-row">
          <textarea
            id="message"
            rows={2}
            value={text}
            disabled={detail.status === "unreadable"}
            onInput={(e) => setText((e.target as HTMLTextAreaElement).value)}
            onKeyDown={(e) => {
              if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) send(e);
            }}
            aria-describedby="message-help"
          />
          <button type="submit" class="primary" disabled={busy === "send" || detail.status === "unreadable"}>
            Send
          </button>
        </div>
        <p id="message-help" class="help">
          {detail.status === "unreadable"
            ? "An unreadable agent takes no messages until its file is fixed."
            : `Queued for ${key}; Ctrl+Enter sends.`}
        </p>
      </form>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
    </div>
  );
}
