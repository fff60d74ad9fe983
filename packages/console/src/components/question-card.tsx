import type { AgentDetail } from "@wardrik/protocol";
import { useState } from "preact/hooks";
import { useApi } from "../context";
import { usePersonAction, WaitingCallCard, type Props } from "./waiting-call-card";

type Question = NonNullable<AgentDetail["waiting_calls"][number]["question"]>;

/**
 * A question an agent asks a person (person/ask): the question and, with
 * choices, a button for each; without, a text answer. The answer is the
 * call's result and the agent's turn goes on.
 */
export function QuestionCard(props: Props & { question: Question }) {
  const { call, question } = props;
  const api = useApi();
  const [text, setText] = useState("");
  const { busy, done, error, act } = usePersonAction(props.onDecided);
  const answer = (value: string) => act(() => api.answer(props.agentId, call.call, value), `Answered "${value}"; the agent goes on.`);

  return (
    <WaitingCallCard {...props} kind="question" title="Question" about={<p class="why">{question.question}</p>} done={done} error={error}>
      {question.choices ? (
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
          <label for={`call-${call.call}-answer`}>Answer</label>
          <textarea
            id={`call-${call.call}-answer`}
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
    </WaitingCallCard>
  );
}
