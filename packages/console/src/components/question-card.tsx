import type { AgentDetail } from "@wardrik/protocol";
import { useState } from "preact/hooks";
import { messageOf } from "../client/api";
import { useApi } from "../context";
import { agentHref } from "../router";
import type { Props } from "./approval-card";
import { RecentContext } from "./recent-context";

type Question = NonNullable<AgentDetail["waiting_calls"][number]["question"]>;

/**
 * A question an agent asks a person (person/ask): the question and, with
 * choices, a button for each; without, a text answer. The answer is the
 * call's result and the agent's turn goes on.
 */
export function QuestionCard({ agentId, agentName, call, contextOpen = false, onDecided, question }: Props & { question: Question }) {
  const api = useApi();
  const [text, setText] = useState("");
  const [busy, setBusy] = useState(false);
  const [done, setDone] = useState<string>();
  const [error, setError] = useState<string>();
  const [contextShown, setContextShown] = useState(contextOpen);
  const base = `call-${call.call}`;

  const answer = async (value: string) => {
    setBusy(true);
    setError(undefined);
    try {
      await api.answer(agentId, call.call, value);
      setDone(`Answered "${value}"; the agent goes on.`);
      onDecided();
    } catch (e) {
      setError(messageOf(e));
    } finally {
      setBusy(false);
    }
  };

  return (
    <article class="approval question" aria-labelledby={`${base}-title`}>
      <header class="approval-head">
        <h3 id={`${base}-title`}>
          <span class="tool">Question</span>
          {agentName && (
            <>
              {" "}
              <span class="muted">from</span> <a href={agentHref(agentId)}>{agentName}</a>
            </>
          )}
        </h3>
        <code class="id">{call.call}</code>
      </header>
      <p class="why">{question.question}</p>
      <details class="context-box" open={contextOpen} onToggle={(e) => setContextShown((e.target as HTMLDetailsElement).open)}>
        <summary>Recent context</summary>
        {contextShown && <RecentContext agentId={agentId} run={call.run} />}
      </details>
      {done ? (
        <p class="done" role="status">
          {done}
        </p>
      ) : question.choices ? (
        <div class="actions" role="group" aria-label="Choices">
          {question.choices.map((c) => (
            <button key={c} type="button" disabled={busy} onClick={() => void answer(c)}>
              {c}
            </button>
          ))}
        </div>
      ) : (
        <form
          class="decide-form"
          onSubmit={(e) => {
            e.preventDefault();
            if (text.trim()) void answer(text.trim());
          }}
        >
          <label for={`${base}-answer`}>Answer</label>
          <textarea
            id={`${base}-answer`}
            rows={3}
            value={text}
            onInput={(e) => setText((e.target as HTMLTextAreaElement).value)}
            placeholder="The agent gets this as the answer"
          />
          <div class="actions">
            <button type="submit" class="primary" disabled={busy || !text.trim()}>
              Answer
            </button>
          </div>
        </form>
      )}
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
    </article>
  );
}
