import type { WardrikCloudEvent } from "@wardrik/protocol";
import { useMemo, useState } from "preact/hooks";
import type { AgentStream } from "../agent-stream";
import { editOf } from "../approval-info";
import { messageOf } from "../client/api";
import { useApi } from "../context";
import { shortType } from "../format";
import { EventRow } from "./event-row";

/** Event types by their noun: the filters of the list. */
const GROUPS = ["agent", "message", "turn", "model", "round", "call", "approval", "budget", "conversation"] as const;
const SHOWN = 300;
/** A search reads this many matches at most, a page at a time. */
const SEARCH_MAX = 2000;
const SEARCH_PAGE = 500;

function groupOf(type: string): string {
  const noun = type.split(".")[0] ?? "";
  return noun === "messages" ? "message" : noun;
}

type Search = { text: string; state: "loading" } | { text: string; state: "done"; events: WardrikCloudEvent[]; more: boolean };

/**
 * The agent's events, newest first: live, or those that hold a searched text
 * (found by the daemon, in every event of the agent). Filtered by type; each
 * reads as a line and unfolds to its raw JSON.
 */
export function EventList({ stream }: { stream: AgentStream }) {
  const api = useApi();
  const [hidden, setHidden] = useState<Set<string>>(() => new Set());
  const [error, setError] = useState<string>();
  const [query, setQuery] = useState("");
  const [search, setSearch] = useState<Search>();
  const source = search?.state === "done" ? search.events : search ? [] : stream.events;
  const shown = source.filter((e) => !hidden.has(groupOf(shortType(e.type))));
  const newest = shown.slice(-SHOWN).reverse();
  // A call's arguments are in the round that planned it (or the approval that edited them); call.started lines show them.
  const args = useMemo(() => {
    const m = new Map<string, unknown>();
    for (const e of [...stream.events, ...(search?.state === "done" ? search.events : [])]) {
      const type = shortType(e.type);
      if (type === "round.saved")
        for (const c of (e.data.calls as { call: string; args: unknown }[] | undefined) ?? []) m.set(c.call, c.args);
      // A person's edit replaces what the model asked for.
      else if (type === "approval.granted" && editOf(e.data)) m.set(String(e.data.call), editOf(e.data)!.args);
    }
    return m;
  }, [stream.events.length, stream.events.at(-1)?.seq, search]);

  const toggle = (g: string) =>
    setHidden((h) => {
      const next = new Set(h);
      if (next.has(g)) next.delete(g);
      else next.add(g);
      return next;
    });

  const run = async (text: string) => {
    setSearch({ text, state: "loading" });
    setError(undefined);
    try {
      const found: WardrikCloudEvent[] = [];
      let full = true;
      for (let after = 0; found.length < SEARCH_MAX;) {
        const page = await api.events(stream.agentId, { after, limit: SEARCH_PAGE, text });
        found.push(...page.events);
        full = page.events.length === SEARCH_PAGE;
        if (!full) break;
        after = page.events.at(-1)!.seq;
      }
      setSearch({ text, state: "done", events: found, more: full });
    } catch (e) {
      setSearch(undefined);
      setError(messageOf(e));
    }
  };

  const count = `${shown.length === source.length ? source.length : `${shown.length} of ${source.length}`} event${source.length === 1 ? "" : "s"}`;
  return (
    <div class="events">
      <form
        class="search"
        role="search"
        onSubmit={(e) => {
          e.preventDefault();
          const text = query.trim();
          if (text === "") setSearch(undefined);
          else void run(text);
        }}
      >
        <label for="event-search">Search events</label>
        <div class="search-row">
          <input
            id="event-search"
            type="search"
            value={query}
            maxLength={200}
            placeholder="Words of a message or reply, a tool argument, an error…"
            onInput={(e) => setQuery((e.target as HTMLInputElement).value)}
          />
          <button type="submit">Search</button>
          {search && (
            <button
              type="button"
              onClick={() => {
                setSearch(undefined);
                setQuery("");
              }}
            >
              Show live events
            </button>
          )}
        </div>
      </form>
      <fieldset class="filters">
        <legend>Event types</legend>
        {GROUPS.map((g) => (
          <label key={g} class="check-label">
            <input type="checkbox" checked={!hidden.has(g)} onChange={() => toggle(g)} /> {g}
          </label>
        ))}
      </fieldset>
      <p class="muted" role="status">
        {search?.state === "loading"
          ? `Searching for “${search.text}”…`
          : search
            ? `${count} hold “${search.text}”${search.more ? ` (the first ${SEARCH_MAX})` : ""}`
            : `${count}${stream.from > 0 ? ` (the latest; ${stream.from} earlier ones not loaded)` : ""}`}
      </p>
      <ol class="event-list" aria-label={search ? `Events that hold ${search.text}` : "Events"}>
        {newest.map((e) => (
          <EventRow key={e.seq} event={e} agentId={stream.agentId} argsOf={(c) => args.get(c)} />
        ))}
      </ol>
      {!search && stream.from > 0 && (
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
