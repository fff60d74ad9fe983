import type { AgentDetail, AgentSummary } from "@wardrik/protocol";
import { useEffect, useRef, useState } from "preact/hooks";
import { messageOf } from "../client/api";
import { ApprovalCard } from "../components/approval-card";
import { waitingHeading } from "../components/waiting-call-card";
import { Spend } from "../components/spend";
import { StatusBadge } from "../components/status-badge";
import { useApi, useFeed } from "../context";
import { ago, agentOfSource, clock, shortType } from "../format";
import { agentHref } from "../router";
import { useDebouncedByKey, useTick } from "../use-debounced";

/** Attention first: a call waits for a person, then an agent that cannot run; then the rest. */
const RANK: Record<string, number> = { parked: 0, unreadable: 1, running: 2, queued: 3, idle: 4, asleep: 5 };
/** Events after which the list itself (not just one agent) may have changed. */
const LIST_CHANGES = new Set(["agent.loaded", "agent.removed", "agent.updated", "agent.unreadable"]);

export function AgentsPage() {
  const api = useApi();
  const feed = useFeed();
  const [agents, setAgents] = useState<AgentSummary[]>();
  const [details, setDetails] = useState<Record<string, AgentDetail>>({});
  const [error, setError] = useState<string>();
  const [query, setQuery] = useState("");
  const [, setNow] = useState(0);
  const heading = useRef<HTMLHeadingElement>(null);
  useTick(15_000, () => setNow(Date.now()));

  const loadDetail = async (id: string) => {
    try {
      const d = await api.agent(id);
      setDetails((all) => ({ ...all, [id]: d }));
    } catch {
      // Removed meanwhile: the list reload drops it.
    }
  };

  const loadList = async () => {
    try {
      const list = await api.agents();
      setAgents(list);
      setError(undefined);
      // A few at a time: the browser keeps a handful of connections per host, and two carry live streams.
      const queue = [...list];
      await Promise.all(
        Array.from({ length: 3 }, async () => {
          for (let a = queue.shift(); a; a = queue.shift()) await loadDetail(a.id);
        }),
      );
    } catch (e) {
      setError(messageOf(e));
    }
  };

  const refreshAgent = useDebouncedByKey((id) => void (id === "*" ? loadList() : loadDetail(id)), 250);

  useEffect(() => {
    document.title = "Agents · Wardrik";
    heading.current?.focus({ preventScroll: true });
    void loadList();
  }, []);

  useEffect(
    () =>
      feed.subscribe((e) => {
        const id = agentOfSource(e.source);
        setDetails((all) => (all[id] ? { ...all, [id]: { ...all[id], last_activity_at: e.time } } : all));
        refreshAgent(LIST_CHANGES.has(shortType(e.type)) ? "*" : id);
      }),
    [feed],
  );

  const rows = (agents ?? [])
    .map((a) => ({ summary: a, detail: details[a.id] }))
    .map((r) => ({ ...r, status: r.detail?.status ?? r.summary.status }))
    .sort((x, y) => (RANK[x.status] ?? 9) - (RANK[y.status] ?? 9) || x.summary.name.localeCompare(y.summary.name));
  const needle = query.trim().toLowerCase();
  const matching =
    needle === "" ? rows : rows.filter(({ summary: a }) => [a.name, a.title, a.description].some((t) => t.toLowerCase().includes(needle)));
  const waiting = rows.flatMap((r) => (r.detail?.waiting_calls ?? []).map((call) => ({ agent: r.summary, call })));
  const unreadable = rows.filter((r) => r.status === "unreadable").length;

  return (
    <>
      <h1 ref={heading} tabIndex={-1}>
        Agents
      </h1>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {agents === undefined && !error ? (
        <p role="status">Loading agents…</p>
      ) : (
        <p class="summary">
          {agents?.length ?? 0} agents · {waiting.length} {waiting.length === 1 ? "call waits" : "calls wait"} for a person · {unreadable}{" "}
          unreadable
        </p>
      )}
      {waiting.length > 0 && (
        <section aria-labelledby="waiting-heading" class="waiting">
          <h2 id="waiting-heading">{waitingHeading(waiting.map((w) => w.call))}</h2>
          <div class="approvals">
            {waiting.map(({ agent, call }) => (
              <ApprovalCard
                key={call.call}
                agentId={agent.id}
                agentName={agent.name}
                call={call}
                onDecided={() => void loadDetail(agent.id)}
              />
            ))}
          </div>
        </section>
      )}
      <section aria-labelledby="all-heading">
        <div class="section-head">
          <h2 id="all-heading">All agents</h2>
          {(agents?.length ?? 0) > 0 && (
            <div class="search inline" role="search">
              <label for="agent-search">Search agents</label>
              <input
                id="agent-search"
                type="search"
                value={query}
                placeholder="Name or description"
                onInput={(e) => setQuery((e.target as HTMLInputElement).value)}
                aria-describedby="agent-search-count"
              />
            </div>
          )}
        </div>
        {needle !== "" && (
          <p id="agent-search-count" class="muted" role="status">
            {matching.length === 0
              ? `No agent's name or description holds “${query.trim()}”.`
              : `${matching.length} of ${rows.length} agents match.`}
          </p>
        )}
        {agents?.length === 0 ? (
          <p>No agents yet. Add a file to agents/ and run wardrik reload.</p>
        ) : matching.length === 0 && needle !== "" ? null : (
          <div role="table" class="agents" aria-labelledby="all-heading">
            <div role="rowgroup" class="agents-head">
              <div role="row">
                <span role="columnheader">Agent</span>
                <span role="columnheader">Status</span>
                <span role="columnheader">Model</span>
                <span role="columnheader">Spend today</span>
                <span role="columnheader">Last activity</span>
              </div>
            </div>
            <div role="rowgroup">
              {matching.map(({ summary: a, detail: d, status }) => (
                <div role="row" key={a.id} class={`agent-row status-${status}`}>
                  <span role="cell" class="agent-name">
                    <a href={agentHref(a.id)}>{a.name}</a>
                    {a.title !== a.name && <span class="sub">{a.title}</span>}
                  </span>
                  <span role="cell" data-label="Status">
                    <StatusBadge status={status} />
                    {status === "unreadable" && a.reason && <span class="sub reason">{a.reason}</span>}
                  </span>
                  <span role="cell" data-label="Model">
                    {status === "unreadable" ? "—" : d ? (d.model ?? "config default") : "…"}
                  </span>
                  <span role="cell" data-label="Spend today">
                    {d ? <Spend spend={d.spend} /> : "…"}
                  </span>
                  <span role="cell" data-label="Last activity">
                    {d?.last_activity_at ? (
                      <time dateTime={d.last_activity_at} title={clock(d.last_activity_at)}>
                        {ago(d.last_activity_at)}
                      </time>
                    ) : d ? (
                      "never"
                    ) : (
                      "…"
                    )}
                  </span>
                </div>
              ))}
            </div>
          </div>
        )}
      </section>
    </>
  );
}
