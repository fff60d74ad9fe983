import { useState } from "preact/hooks";
import type { AgentStream } from "../agent-stream";
import { messageOf } from "../client/api";
import { clock, oneLine, shortType } from "../format";
import { JsonBlock } from "./json-block";

/** Event types by their noun: the filters of the list. */
const GROUPS = ["agent", "message", "turn", "model", "round", "call", "approval", "budget", "conversation"] as const;
const SHOWN = 300;

function groupOf(type: string): string {
  const noun = type.split(".")[0] ?? "";
  return noun === "messages" ? "message" : noun;
}

/** The agent's events, newest first, live; filtered by type; each unfolds to its data. */
export function EventList({ stream }: { stream: AgentStream }) {
  const [hidden, setHidden] = useState<Set<string>>(() => new Set());
  const [error, setError] = useState<string>();
  const all = stream.events;
  const shown = all.filter((e) => !hidden.has(groupOf(shortType(e.type))));
  const newest = shown.slice(-SHOWN).reverse();

  const toggle = (g: string) =>
    setHidden((h) => {
      const next = new Set(h);
      if (next.has(g)) next.delete(g);
      else next.add(g);
      return next;
    });

  return (
    <div class="events">
      <fieldset class="filters">
        <legend>Event types</legend>
        {GROUPS.map((g) => (
          <label key={g} class="check-label">
            <input type="checkbox" checked={!hidden.has(g)} onChange={() => toggle(g)} /> {g}
          </label>
        ))}
      </fieldset>
      <p class="muted" role="status">
        {shown.length === all.length ? `${all.length} events` : `${shown.length} of ${all.length} events`}
        {stream.from > 0 ? ` (the latest; ${stream.from} earlier ones not loaded)` : ""}
      </p>
      <ol class="event-list">
        {newest.map((e) => {
          const type = shortType(e.type);
          return (
            <li key={e.seq}>
              <details>
                <summary>
                  <span class="seq">#{e.seq}</span> <time dateTime={e.time}>{clock(e.time)}</time> <span class="etype">{type}</span>{" "}
                  <span class="args-line">{oneLine(e.data, 90)}</span>
                </summary>
                {e.run && (
                  <p class="muted">
                    Turn <code>{e.run}</code>
                  </p>
                )}
                <JsonBlock value={e.data} label={`Data of event ${e.seq}, ${type}`} />
              </details>
            </li>
          );
        })}
      </ol>
      {stream.from > 0 && (
        <button type="button" onClick={() => stream.loadEarlier().catch((err: unknown) => setError(messageOf(err)))}>
          Load earlier events
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
