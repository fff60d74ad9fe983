import type { AgentDetail, AgentTools } from "@wardrik/protocol";
import { useEffect, useState } from "preact/hooks";
import { messageOf } from "../api";
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
    api.get<AgentTools>(`v1/agents/${detail.id}/tools`).then(setTools, (e: unknown) => setError(messageOf(e)));
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
        <dd>{detail.policy ? <code>policies/{detail.policy}.yaml</code> : "the default policy"}</dd>
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
