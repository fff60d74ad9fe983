import type { AgentDetail, TurnSummary } from "@wardrik/protocol";
import { useEffect, useRef, useState } from "preact/hooks";
import type { AgentStream } from "../agent-stream";
import { messageOf } from "../client/api";
import { useApi } from "../context";
import { between, duration, shortType, usd, when } from "../format";
import { turnHref } from "../router";
import { useDebouncedByKey, useTick } from "../use-debounced";
import { ConversationPicker } from "./conversation-picker";
import { StatusBadge } from "./status-badge";

interface Props {
  detail: AgentDetail;
  stream: AgentStream;
  conversation: string;
  onConversation: (key: string) => void;
}

/** A conversation's turns, newest first: what each was asked, its status, how long it took and what it cost. */
export function TurnsPanel({ detail, stream, conversation, onConversation }: Props) {
  const api = useApi();
  const [turns, setTurns] = useState<{ key: string; list: TurnSummary[]; next: string | null }>();
  const [error, setError] = useState<string>();
  const [, setNow] = useState(0);
  const loads = useRef(0);
  const keys = detail.conversations.map((c) => c.key);
  const exists = keys.includes(conversation);
  const running = turns?.list.some((t) => t.status === "running" || t.status === "parked") ?? false;
  useTick(running ? 1000 : 60_000, () => setNow(Date.now()));

  const load = async (more?: string) => {
    const load = ++loads.current;
    if (!exists) return setTurns({ key: conversation, list: [], next: null });
    try {
      const page = await api.turns(detail.id, conversation, more);
      if (load !== loads.current) return;
      setTurns((old) => ({ key: conversation, list: more && old ? [...old.list, ...page.turns] : page.turns, next: page.next }));
      setError(undefined);
    } catch (e) {
      if (load === loads.current) setError(messageOf(e));
    }
  };
  const refresh = useDebouncedByKey(() => void load(), 250);
  useEffect(() => void load(), [conversation, exists]);
  useEffect(
    () => stream.onEventOf((e) => void (shortType(e.type).startsWith("turn.") && refresh("turns"))),
    [stream, conversation, exists],
  );

  const list = turns?.key === conversation ? turns.list : undefined;
  return (
    <div class="turns">
      <div class="toolbar">
        <ConversationPicker id="turns-conversation" keys={keys} value={conversation} onChange={onConversation} />
      </div>
      {list === undefined ? (
        <p class="muted" role="status">
          Loading the turns of {conversation}…
        </p>
      ) : list.length === 0 ? (
        <p class="muted">No turns in {conversation} yet.</p>
      ) : (
        <table class="turn-table" aria-label={`Turns of ${conversation}`}>
          <thead>
            <tr>
              <th scope="col">Started</th>
              <th scope="col">Message</th>
              <th scope="col">Status</th>
              <th scope="col" class="num">
                Duration
              </th>
              <th scope="col" class="num">
                Model calls
              </th>
              <th scope="col" class="num">
                Cost
              </th>
            </tr>
          </thead>
          <tbody>
            {list.map((t) => (
              <tr key={t.id}>
                <td data-label="Started">
                  <time dateTime={t.started_at}>{when(t.started_at)}</time>
                </td>
                <td data-label="Message" class="turn-message">
                  <a href={turnHref(detail.id, t.id)}>{t.first_message?.trim() || "(no message)"}</a>
                </td>
                <td data-label="Status">
                  <StatusBadge status={t.status} />
                </td>
                <td data-label="Duration" class="num">
                  {duration(between(t.started_at, t.ended_at))}
                  {t.parked_ms > 0 && <span class="sub">{duration(t.parked_ms)} waiting for a person</span>}
                </td>
                <td data-label="Model calls" class="num">
                  {t.iterations}
                </td>
                <td data-label="Cost" class="num">
                  {usd(t.spend_usd)}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {turns?.key === conversation && turns.next !== null && (
        <button type="button" onClick={() => void load(turns.next ?? undefined)}>
          Older turns
        </button>
      )}
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
    </div>
  );
}
