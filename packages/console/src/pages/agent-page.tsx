import type { AgentDetail } from "@wardrik/protocol";
import { useEffect, useRef, useState } from "preact/hooks";
import { useAgentStream } from "../agent-stream";
import { messageOf } from "../client/api";
import { AgentConfig } from "../components/agent-config";
import { ApprovalCard } from "../components/approval-card";
import { waitingHeading } from "../components/waiting-call-card";
import { ConversationPanel } from "../components/conversation-panel";
import { EventList } from "../components/event-list";
import { Spend } from "../components/spend";
import { StatusBadge } from "../components/status-badge";
import { TurnTimelineView } from "../components/turn-timeline-view";
import { TurnsPanel } from "../components/turns-panel";
import { useApi } from "../context";
import { ago, clock } from "../format";
import { agentHref, type AgentTab } from "../router";
import { useDebouncedByKey, useTick } from "../use-debounced";

const TABS: { tab: AgentTab; label: string }[] = [
  { tab: "conversation", label: "Conversation" },
  { tab: "turns", label: "Turns" },
  { tab: "events", label: "Events" },
  { tab: "configuration", label: "Configuration" },
];

/**
 * One agent: what waits for a person, its conversations live, the turns of a
 * conversation (and one turn's timeline), its events, and how it is configured.
 */
export function AgentPage({ id, tab, run }: { id: string; tab: AgentTab; run?: string | undefined }) {
  const api = useApi();
  const stream = useAgentStream(api, id);
  const [detail, setDetail] = useState<AgentDetail>();
  const [error, setError] = useState<string>();
  const [picked, setPicked] = useState<string>();
  const [, setNow] = useState(0);
  const heading = useRef<HTMLHeadingElement>(null);
  useTick(15_000, () => setNow(Date.now()));

  const load = async () => {
    try {
      setDetail(await api.agent(id));
      setError(undefined);
    } catch (e) {
      setError(messageOf(e));
    }
  };
  const refresh = useDebouncedByKey(() => void load(), 200);

  useEffect(() => void load(), [id]);
  useEffect(() => stream.onEventOf(() => refresh(id)), [stream]);
  useEffect(() => {
    if (!detail) return;
    document.title = `${detail.name} · Wardrik`;
  }, [detail?.name]);
  useEffect(() => heading.current?.focus({ preventScroll: true }), [detail === undefined]);

  if (!detail)
    return error ? (
      <section>
        <h1>Agent not found</h1>
        <p class="error" role="alert">
          {error}
        </p>
        <p>
          <a href="#/">Back to the agents</a>
        </p>
      </section>
    ) : (
      <p role="status">Loading the agent…</p>
    );

  const keys = detail.conversations.map((c) => c.key);
  // The conversation the Conversation and Turns tabs show: the one picked, else main, else the first there is.
  const conversation = picked ?? (keys.includes("main") || keys.length === 0 ? "main" : keys[0]!);
  return (
    <>
      <p class="crumbs">
        <a href="#/">Agents</a> / {detail.name}
      </p>
      <header class="agent-head">
        <h1 ref={heading} tabIndex={-1}>
          {detail.title}
        </h1>
        <StatusBadge status={detail.status} />
        <dl class="facts inline-facts">
          <div>
            <dt>Name</dt>
            <dd>
              <code>{detail.name}</code>
            </dd>
          </div>
          <div>
            <dt>Model</dt>
            <dd>{detail.model ?? "config default"}</dd>
          </div>
          <div>
            <dt>Spend today</dt>
            <dd>
              <Spend spend={detail.spend} />
            </dd>
          </div>
          <div>
            <dt>Last activity</dt>
            <dd>
              {detail.last_activity_at ? (
                <time dateTime={detail.last_activity_at} title={clock(detail.last_activity_at)}>
                  {ago(detail.last_activity_at)}
                </time>
              ) : (
                "never"
              )}
            </dd>
          </div>
        </dl>
        {detail.description && <p class="description">{detail.description}</p>}
      </header>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}

      {detail.status === "unreadable" && (
        <section class="unreadable" aria-labelledby="unreadable-heading">
          <h2 id="unreadable-heading">Unreadable</h2>
          <p class="reason">{detail.reason ?? "No reason was recorded."}</p>
          {detail.file && (
            <p>
              File: <code>{detail.file}</code>. Fix it, then run <code>wardrik reload</code>.
            </p>
          )}
        </section>
      )}

      {detail.waiting_calls.length > 0 && (
        <section aria-labelledby="approvals-heading" class="waiting">
          <h2 id="approvals-heading">{waitingHeading(detail.waiting_calls)}</h2>
          <div class="approvals">
            {detail.waiting_calls.map((c) => (
              <ApprovalCard key={c.call} agentId={detail.id} call={c} contextOpen onDecided={() => void load()} />
            ))}
          </div>
        </section>
      )}

      <nav class="tabs" aria-label="Agent sections">
        {TABS.map((t) => (
          <a key={t.tab} href={agentHref(detail.id, t.tab)} aria-current={t.tab === tab ? "page" : undefined}>
            {t.label}
          </a>
        ))}
        <span class={`feed feed-${stream.state}`}>
          {stream.state === "live" ? "Live" : stream.state === "stopped" ? "Offline" : "Connecting…"}
        </span>
      </nav>
      <section class="tab-panel" aria-label={TABS.find((t) => t.tab === tab)!.label}>
        {tab === "conversation" ? (
          <ConversationPanel
            detail={detail}
            stream={stream}
            conversation={conversation}
            onConversation={setPicked}
            onChanged={() => void load()}
          />
        ) : tab === "turns" && run !== undefined ? (
          <TurnTimelineView key={run} stream={stream} run={run} onConversation={setPicked} />
        ) : tab === "turns" ? (
          <TurnsPanel detail={detail} stream={stream} conversation={conversation} onConversation={setPicked} />
        ) : tab === "events" ? (
          <EventList stream={stream} />
        ) : (
          <AgentConfig detail={detail} />
        )}
      </section>
    </>
  );
}
