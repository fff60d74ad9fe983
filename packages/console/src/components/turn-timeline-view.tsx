import type { TurnView, WardrikCloudEvent } from "@wardrik/protocol";
import { Fragment } from "preact";
import { useEffect, useRef, useState } from "preact/hooks";
import type { AgentStream } from "../agent-stream";
import { messageOf } from "../client/api";
import { useApi } from "../context";
import { between, duration, oneLine, shortType, usd, when } from "../format";
import { agentHref } from "../router";
import { buildTimeline, type TimelineStep } from "../turn-timeline";
import { useTick } from "../use-debounced";
import { JsonBlock } from "./json-block";
import { StatusBadge } from "./status-badge";

interface Props {
  stream: AgentStream;
  run: string;
  onConversation: (key: string) => void;
}

const PAGE = 1000;

/**
 * One turn from start to end: its model calls and tool calls with how long
 * each took and what it cost, the approvals in between (who decided, and the
 * arguments a person edited), live while the turn runs.
 */
export function TurnTimelineView({ stream, run, onConversation }: Props) {
  const api = useApi();
  const agentId = stream.agentId;
  const [turn, setTurn] = useState<TurnView>();
  const [events, setEvents] = useState<Map<number, WardrikCloudEvent>>();
  const [asked, setAsked] = useState<string[]>([]);
  const [error, setError] = useState<string>();
  const [, setNow] = useState(0);
  const heading = useRef<HTMLHeadingElement>(null);

  useEffect(() => {
    let live = true;
    const seen = new Map<number, WardrikCloudEvent>();
    // Listen first, then read: nothing falls between the two.
    const off = stream.onEventOf((e) => {
      if (e.run !== run) return;
      seen.set(e.seq, e);
      if (live) setEvents(new Map(seen));
      // The turn's status, end and spend change with its own events.
      if (shortType(e.type).startsWith("turn."))
        api.turn(agentId, run).then(
          (t) => live && setTurn(t),
          () => undefined,
        );
    });
    (async () => {
      const view = await api.turn(agentId, run);
      if (!live) return;
      setTurn(view);
      onConversation(view.conversation);
      for (let after = 0; ;) {
        const page = await api.events(agentId, { after, limit: PAGE, run });
        for (const e of page.events) seen.set(e.seq, e);
        if (page.events.length < PAGE) break;
        after = page.events.at(-1)!.seq;
      }
      if (live) setEvents(new Map(seen));
      // What the turn was asked: its messages' message.queued events.
      const texts: string[] = [];
      for (const id of view.messages.slice(0, 5)) {
        const found = await api.events(agentId, { after: 0, limit: 1, types: ["message.queued"], text: id });
        const text = found.events[0]?.data.text;
        if (typeof text === "string") texts.push(text);
      }
      if (live) setAsked(texts);
    })().catch((e: unknown) => live && setError(messageOf(e)));
    return () => {
      live = false;
      off();
    };
  }, [agentId, run]);
  useEffect(() => heading.current?.focus({ preventScroll: true }), [turn === undefined]);

  const timeline = buildTimeline([...(events?.values() ?? [])]);
  const open = turn !== undefined && turn.ended_at === undefined;
  useTick(open ? 1000 : 3_600_000, () => setNow(Date.now()));

  if (error && !turn)
    return (
      <div class="timeline-panel">
        <p class="error" role="alert">
          {error}
        </p>
      </div>
    );
  if (!turn || !events)
    return (
      <div class="timeline-panel">
        <p class="muted" role="status">
          Loading turn {run}…
        </p>
      </div>
    );

  const start = timeline.start ?? turn.started_at;
  const end = timeline.end ?? turn.ended_at;
  const span = Math.max(1, between(start, end));
  const cost = turn.ended_at !== undefined ? turn.spend_usd : Math.max(turn.spend_usd, timeline.cost);
  return (
    <div class="timeline-panel">
      <p class="crumbs">
        <a href={agentHref(agentId, "turns")}>Turns of {turn.conversation}</a> / {run}
      </p>
      <header class="turn-head">
        <h2 ref={heading} tabIndex={-1}>
          Turn in {turn.conversation}
        </h2>
        <StatusBadge status={turn.status} />
      </header>
      <dl class="facts inline-facts">
        <div>
          <dt>Started</dt>
          <dd>
            <time dateTime={turn.started_at}>{when(turn.started_at)}</time>
          </dd>
        </div>
        <div>
          <dt>Duration</dt>
          <dd>{duration(between(turn.started_at, turn.ended_at))}</dd>
        </div>
        {turn.parked_ms > 0 && (
          <div>
            <dt>Waiting for a person</dt>
            <dd>{duration(turn.parked_ms)}</dd>
          </div>
        )}
        <div>
          <dt>Model calls</dt>
          <dd>{turn.iterations}</dd>
        </div>
        <div>
          <dt>Cost</dt>
          <dd>{usd(cost)}</dd>
        </div>
      </dl>
      {asked.map((text, i) => (
        <p key={i} class="asked">
          <span class="who">Message</span> {oneLine(text, 600)}
        </p>
      ))}
      {turn.reason && turn.status !== "completed" && <p class="error">{turn.reason}</p>}
      <ol class="timeline" aria-label="Timeline">
        {timeline.steps.map((step) => (
          <Step key={step.key} step={step} start={start} span={span} />
        ))}
      </ol>
      {timeline.steps.length === 0 && <p class="muted">Nothing has happened in this turn yet.</p>}
      {turn.reply && (
        <>
          <h3 class="label">Reply</h3>
          <p class="reply">{turn.reply}</p>
        </>
      )}
    </div>
  );
}

/** One step: when it began (from the turn's start), what it was, how long it took and cost, and a bar on the turn's span. */
function Step({ step, start, span }: { step: TimelineStep; start: string; span: number }) {
  const from = between(start, step.start);
  const took = step.kind === "note" ? undefined : between(step.start, step.end);
  const left = Math.min(100, Math.max(0, (from / span) * 100));
  const width = took === undefined ? 0 : Math.min(100 - left, Math.max(0.6, (took / span) * 100));
  return (
    <li class={`step step-${step.kind}${step.kind === "note" ? ` tone-${step.tone}` : ""}`}>
      <span class="offset num">+{duration(from)}</span>
      <div class="step-body">
        <StepLine step={step} took={took} />
        {took !== undefined && (
          <div class="bar" aria-hidden="true">
            <span style={{ left: `${left}%`, width: `${width}%` }} />
          </div>
        )}
      </div>
    </li>
  );
}

function StepLine({ step, took }: { step: TimelineStep; took: number | undefined }) {
  const length = took === undefined ? "" : duration(took);
  if (step.kind === "note")
    return (
      <p class="step-title">
        {step.text} <Meta parts={[step.cost !== undefined && step.cost > 0 && usd(step.cost)]} />
      </p>
    );
  if (step.kind === "model")
    return (
      <>
        <p class="step-title">
          <span class="step-name">Model call {step.iteration}</span> <StatusBadge status={step.status} />
          <Meta
            parts={[
              length,
              step.inputTokens !== undefined && `${step.inputTokens} tokens in, ${step.outputTokens ?? 0} out`,
              usd(step.cost),
              step.model,
            ]}
          />
        </p>
        {step.error && <p class="step-detail error">{step.error}</p>}
        {step.text && step.text.trim() !== "" ? (
          <p class="step-detail">{oneLine(step.text, 300)}</p>
        ) : (
          step.toolCalls > 0 && (
            <p class="step-detail muted">
              Asks for {step.toolCalls} tool call{step.toolCalls === 1 ? "" : "s"}
            </p>
          )
        )}
      </>
    );
  if (step.kind === "approval")
    return (
      <>
        <p class="step-title">
          <span class="step-name">Approval of {step.tool}</span> <StatusBadge status={step.outcome} />
          {step.edit && <span class="tag tag-edited">edited</span>}
          <Meta parts={[step.end ? `waited ${length}` : `waiting ${length}`, step.by && `${step.outcome} by ${step.by}`]} />
        </p>
        {step.reason && <p class="step-detail">{step.reason}</p>}
        {step.edit ? (
          <div class="edited">
            <h4 class="label">Edited arguments (the call ran with these)</h4>
            <JsonBlock value={step.edit.args} label={`Edited arguments of ${step.tool}`} />
            <h4 class="label">Arguments the model asked for</h4>
            <JsonBlock value={step.edit.original ?? step.args} label={`Original arguments of ${step.tool}`} />
          </div>
        ) : (
          <p class="step-detail args-line">{oneLine(step.args ?? {}, 200)}</p>
        )}
      </>
    );
  return (
    <>
      <p class="step-title">
        <span class="step-name tool">{step.tool}</span> <StatusBadge status={step.status} />
        {step.edit && <span class="tag tag-edited">edited</span>}
        <Meta parts={[length, step.attempts > 1 && `${step.attempts} attempts`, step.cost > 0 && usd(step.cost), step.decision]} />
      </p>
      <details class="step-data">
        <summary>
          <span class="args-line">{oneLine(step.args ?? {}, 160)}</span>
        </summary>
        <h4 class="label">{step.edit ? "Arguments (edited by a person)" : "Arguments"}</h4>
        <JsonBlock value={step.args ?? {}} label={`Arguments of ${step.tool}`} />
        <h4 class="label">Result</h4>
        {step.output !== undefined ? (
          <JsonBlock value={step.output} label={`Result of ${step.tool}`} />
        ) : step.error ? (
          <p class="error">{step.error}</p>
        ) : (
          <p class="muted">No result yet.</p>
        )}
      </details>
    </>
  );
}

/** A step's figures, " · " between them; each one stays whole on a narrow screen. */
function Meta({ parts }: { parts: (string | false | undefined | null)[] }) {
  const shown = parts.filter((p): p is string => typeof p === "string" && p !== "");
  if (shown.length === 0) return null;
  return (
    <span class="meta">
      {shown.map((p, i) => (
        <Fragment key={i}>
          {i > 0 && " · "}
          <span>{p}</span>
        </Fragment>
      ))}
    </span>
  );
}
