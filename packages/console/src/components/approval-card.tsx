import { checkEditedArguments } from "@wardrik/protocol/edited-arguments";
import { useLayoutEffect, useRef, useState } from "preact/hooks";
import { messageOf } from "../client/api";
import { useApi } from "../context";
import { pretty } from "../format";
import { JsonBlock } from "./json-block";
import { QuestionCard } from "./question-card";
import { usePersonAction, WaitingCallCard, type Props } from "./waiting-call-card";

type Mode = "view" | "deny" | "edit";
type Check = { state: "loading" } | { state: "ok"; value: Record<string, unknown> } | { state: "bad"; problems: string[] };

/**
 * One call that waits for a person: the tool, its arguments, why it waits (the
 * policy rule that asked), and the agent's recent context, with Approve, Deny
 * (with a reason) and Edit (change the arguments, checked against the tool's
 * schema, then approve).
 */
export function ApprovalCard(props: Props) {
  return props.call.question ? <QuestionCard {...props} question={props.call.question} /> : <ApprovalForm {...props} />;
}

function ApprovalForm(props: Props) {
  const { agentId, call } = props;
  const api = useApi();
  const [mode, setMode] = useState<Mode>("view");
  const { busy, done, error, act } = usePersonAction(props.onDecided);
  const [problem, setProblem] = useState<string>();
  const [reason, setReason] = useState("");
  const [argsText, setArgsText] = useState(() => pretty(call.args));
  const [schema, setSchema] = useState<Record<string, unknown> | "unavailable">();
  const focusTarget = useRef<HTMLElement | null>(null);
  const base = `call-${call.call}`;

  // Before the browser paints: a key typed right after pressing Deny or Edit lands in the field.
  useLayoutEffect(() => focusTarget.current?.focus(), [mode]);

  const decide = (verb: "approve" | "deny", body: object, what: string) => act(() => api.decide(agentId, call.call, verb, body), what);

  const startEdit = async () => {
    setMode("edit");
    if (schema !== undefined) return;
    try {
      const tools = await api.tools(agentId);
      setSchema(tools.tools.find((t) => t.name === call.tool)?.input_schema ?? "unavailable");
    } catch (e) {
      setProblem(messageOf(e));
      setSchema("unavailable");
    }
  };

  // The daemon's own check (@wardrik/protocol), run as the person types: the page refuses what the API would.
  const check: Check = (() => {
    if (schema === undefined) {
      // The schema is on its way: what is wrong with the text itself can be said already.
      const text = checkEditedArguments(call.tool, {}, argsText);
      return text.ok ? { state: "loading" } : { state: "bad", problems: text.problems };
    }
    const c = checkEditedArguments(call.tool, schema === "unavailable" ? undefined : schema, argsText);
    return c.ok ? { state: "ok", value: c.value } : { state: "bad", problems: c.problems };
  })();

  const about = (
    <>
      {call.reason && <p class="why">{call.reason}</p>}
      <p class="rule">
        {call.rule ? (
          <>
            Asked by policy rule <code>{call.rule}</code>
          </>
        ) : (
          "No policy rule matched: calls that are not read-only need approval."
        )}
      </p>
      <h4 class="label">Arguments</h4>
      <JsonBlock value={call.args} label={`Arguments of ${call.tool}`} />
    </>
  );

  return (
    <WaitingCallCard {...props} kind="approval" title={call.tool} about={about} done={done} error={error ?? problem}>
      {mode === "view" ? (
        <div class="actions">
          <button type="button" class="primary" disabled={busy} onClick={() => void decide("approve", {}, "Approved; the call runs.")}>
            Approve
          </button>
          <button type="button" disabled={busy} onClick={() => setMode("deny")}>
            Deny
          </button>
          <button type="button" disabled={busy} onClick={() => void startEdit()}>
            Edit
          </button>
        </div>
      ) : mode === "deny" ? (
        <form
          class="decide-form"
          onSubmit={(e) => {
            e.preventDefault();
            void decide("deny", reason.trim() ? { reason: reason.trim() } : {}, "Denied; the model is told why.");
          }}
        >
          <label for={`${base}-reason`}>Reason</label>
          <input
            id={`${base}-reason`}
            ref={(el) => void (focusTarget.current = el)}
            value={reason}
            onInput={(e) => setReason((e.target as HTMLInputElement).value)}
            placeholder="The model is told this"
          />
          <div class="actions">
            <button type="submit" class="danger" disabled={busy}>
              Deny with reason
            </button>
            <button type="button" onClick={() => setMode("view")}>
              Back
            </button>
          </div>
        </form>
      ) : (
        <form
          class="decide-form"
          onSubmit={(e) => {
            e.preventDefault();
            if (check.state === "ok") void decide("approve", { arguments: check.value }, "Approved with your edits; the call runs.");
          }}
        >
          <label for={`${base}-args`}>Arguments (JSON)</label>
          <textarea
            id={`${base}-args`}
            ref={(el) => void (focusTarget.current = el)}
            class="code"
            rows={Math.min(14, Math.max(4, argsText.split("\n").length + 1))}
            spellcheck={false}
            value={argsText}
            onInput={(e) => setArgsText((e.target as HTMLTextAreaElement).value)}
            aria-invalid={check.state === "bad" ? true : undefined}
            aria-describedby={`${base}-check`}
          />
          <div id={`${base}-check`} class={`check check-${check.state}`} role="status">
            {check.state === "loading" ? (
              "Loading the tool's schema…"
            ) : check.state === "ok" ? (
              "The arguments fit the tool's schema."
            ) : (
              <ul>
                {check.problems.map((p) => (
                  <li key={p}>{p}</li>
                ))}
              </ul>
            )}
          </div>
          <div class="actions">
            <button type="submit" class="primary" disabled={busy || check.state !== "ok"}>
              Approve with edits
            </button>
            <button type="button" onClick={() => setMode("view")}>
              Back
            </button>
          </div>
        </form>
      )}
    </WaitingCallCard>
  );
}
