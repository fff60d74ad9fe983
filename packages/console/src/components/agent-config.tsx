import type { AgentDetail, AgentTools, PolicyView } from "@wardrik/protocol";
import { useEffect, useState } from "preact/hooks";
import { messageOf } from "../client/api";
import { useApi } from "../context";
import { usd } from "../format";
import { JsonBlock } from "./json-block";

/** What the agent runs with, read only: its definition, policy, tools and triggers, as `GET /v1/agents/{id}` gives them. */
export function AgentConfig({ detail }: { detail: AgentDetail }) {
  const api = useApi();
  const [tools, setTools] = useState<AgentTools>();
  const [error, setError] = useState<string>();
  useEffect(() => {
    if (detail.status === "unreadable") return;
    api.tools(detail.id).then(setTools, (e: unknown) => setError(messageOf(e)));
  }, [detail.id]);
  const triggers = detail.triggers;

  return (
    <div class="config">
      <dl class="facts">
        <dt>Description</dt>
        <dd>{detail.description || "—"}</dd>
        <dt>Model</dt>
        <dd>{detail.model ?? "the config's default model"}</dd>
        <dt>Policy</dt>
        <dd>
          {detail.effective_policy ? (
            <code>policies/{detail.effective_policy.name}.yaml</code>
          ) : detail.policy ? (
            <code>policies/{detail.policy}.yaml</code>
          ) : (
            "the built-in default: read-only calls run, others ask a person"
          )}
        </dd>
        <dt>Tool patterns</dt>
        <dd>{detail.tools.length > 0 ? detail.tools.map((t) => <code key={t}>{t} </code>) : "none"}</dd>
        <dt>Limits</dt>
        <dd>
          {detail.max_iterations} model calls a turn · {detail.timeout} s a turn · {detail.retries} retries · idle after{" "}
          {detail.idle_timeout === "infinity" ? "never" : `${detail.idle_timeout} s`}
        </dd>
        <dt>Budget</dt>
        <dd>
          {detail.spend.per_day_cap_usd !== undefined ? `${usd(detail.spend.per_day_cap_usd)} a day` : "no daily cap"}
          {detail.spend.per_turn_cap_usd !== undefined ? ` · ${usd(detail.spend.per_turn_cap_usd)} a turn` : ""}
        </dd>
        {detail.file && (
          <>
            <dt>File</dt>
            <dd>
              <code>{detail.file}</code>
            </dd>
          </>
        )}
        <dt>Triggers</dt>
        <dd>{triggers === undefined ? "none" : <JsonBlock value={triggers} label="Triggers" />}</dd>
      </dl>
      {detail.tool_warnings.length > 0 && (
        <ul class="warnings">
          {detail.tool_warnings.map((w) => (
            <li key={w.pattern}>
              <code>{w.pattern}</code>: {w.reason}
            </li>
          ))}
        </ul>
      )}
      {detail.effective_policy && <PolicyRules policy={detail.effective_policy} />}
      <h3>Instructions</h3>
      <pre class="instructions" tabIndex={0} aria-label="Instructions">
        {detail.instructions || "(none)"}
      </pre>
      <h3>Tools it can call now</h3>
      {error && <p class="error">{error}</p>}
      {tools === undefined ? (
        <p class="muted">{detail.status === "unreadable" ? "Not while the agent is unreadable." : "Loading…"}</p>
      ) : (
        <ul class="tools">
          {tools.tools.map((t) => (
            <li key={t.name}>
              <code>{t.name}</code> {t.read_only && <span class="tag">read-only</span>}{" "}
              {t.idempotent && <span class="tag">idempotent</span>}
              <span class="sub">{t.description}</span>
            </li>
          ))}
          {tools.unmatched.map((u) => (
            <li key={u.pattern} class="muted">
              <code>{u.pattern}</code>: {u.reason}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

/** The rules of the agent's policy in the order they are tried, each with where it is written. */
function PolicyRules({ policy }: { policy: PolicyView }) {
  return (
    <>
      <h3 id="policy-rules">Policy rules</h3>
      {policy.description && <p class="muted">{policy.description}</p>}
      <ol class="rules" aria-labelledby="policy-rules">
        {policy.rules.map((r, i) => (
          <li key={i}>
            <code>{r.tool}</code> <span class={`tag decision-${r.decision}`}>{r.decision}</span>
            {r.when && <code class="when">when {JSON.stringify(r.when)}</code>}
            {r.judge && (
              <span class="sub">
                judged by {r.judge.model} (on error: {r.judge.on_error}): {r.judge.prompt}
              </span>
            )}
            {r.reason && <span class="sub">{r.reason}</span>}
            {r.source && <span class="sub muted">{r.source}</span>}
          </li>
        ))}
        <li class="muted">otherwise: read-only calls run, others ask a person</li>
      </ol>
      {policy.budget && (
        <p>
          Budget: {policy.budget.per_day_usd !== undefined ? `${usd(policy.budget.per_day_usd)} a day` : "no daily cap"}
          {policy.budget.per_turn_usd !== undefined ? ` · ${usd(policy.budget.per_turn_usd)} a turn` : ""}
        </p>
      )}
    </>
  );
}
