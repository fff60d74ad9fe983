import type { AgentDetail } from "@wardrik/protocol";
import type { ComponentChildren } from "preact";
import { useState } from "preact/hooks";
import { messageOf } from "../client/api";
import { agentHref } from "../router";
import { RecentContext } from "./recent-context";

type WaitingCall = AgentDetail["waiting_calls"][number];

export interface Props {
  agentId: string;
  /** Shown with a link to the agent when the card is not on the agent's own page. */
  agentName?: string;
  call: WaitingCall;
  /** Show the recent context open (the agent's page) or folded (the list of every waiting call). */
  contextOpen?: boolean;
  onDecided: () => void;
}

/** What a person does about a waiting call (approve, deny, answer): one at a time, then what came of it, or its error. */
export function usePersonAction(onDecided: () => void) {
  const [busy, setBusy] = useState(false);
  const [done, setDone] = useState<string>();
  const [error, setError] = useState<string>();
  const act = async (send: () => Promise<unknown>, what: string) => {
    setBusy(true);
    setError(undefined);
    try {
      await send();
      setDone(what);
      onDecided();
    } catch (e) {
      setError(messageOf(e));
    } finally {
      setBusy(false);
    }
  };
  return { busy, done, error, act };
}

/**
 * The frame of a card for a call that waits for a person (an approval or a
 * question): its title with the agent, the call's ID, what the card shows
 * about the call, the agent's recent context, then the person's controls
 * until they acted (`done`), and an error.
 */
export function WaitingCallCard({
  agentId,
  agentName,
  call,
  contextOpen = false,
  kind,
  title,
  about,
  done,
  error,
  children,
}: Omit<Props, "onDecided"> & {
  kind: "approval" | "question";
  title: ComponentChildren;
  about: ComponentChildren;
  done: string | undefined;
  error: string | undefined;
  children: ComponentChildren;
}) {
  const [contextShown, setContextShown] = useState(contextOpen);
  const base = `call-${call.call}`;
  return (
    <article class={kind === "question" ? "approval question" : "approval"} aria-labelledby={`${base}-title`}>
      <header class="approval-head">
        <h3 id={`${base}-title`}>
          <span class="tool">{title}</span>
          {agentName && (
            <>
              {" "}
              <span class="muted">{kind === "question" ? "from" : "by"}</span> <a href={agentHref(agentId)}>{agentName}</a>
            </>
          )}
        </h3>
        <code class="id">{call.call}</code>
      </header>
      {about}
      <details class="context-box" open={contextOpen} onToggle={(e) => setContextShown((e.target as HTMLDetailsElement).open)}>
        <summary>Recent context</summary>
        {contextShown && <RecentContext agentId={agentId} run={call.run} />}
      </details>
      {done ? (
        <p class="done" role="status">
          {done}
        </p>
      ) : (
        children
      )}
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
    </article>
  );
}

/** The heading over waiting calls: what they wait for (approvals, answers to questions, or both). */
export function waitingHeading(calls: readonly WaitingCall[]): string {
  const questions = calls.filter((c) => c.question).length;
  if (questions === 0) return "Waiting for approval";
  return questions === calls.length ? "Waiting for an answer" : "Waiting for approval or an answer";
}
