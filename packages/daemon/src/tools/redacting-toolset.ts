import type { SecretRedactor } from "../secrets/redactor.js";
import { isPlainJsonOutcome, plainJsonOutcome } from "./plain-json.js";
import type { Tx } from "../store/db.js";
import type { RecallQuestion, ToolCallContext, ToolOutcome, ToolScope, Toolset } from "./toolset.js";

/** A tool outcome with known secret values blanked from its output or error; the same object when none occur. */
export function redactOutcome(outcome: ToolOutcome, redactor: SecretRedactor): ToolOutcome {
  if (outcome.ok) {
    const output = redactor.redactValue(outcome.output);
    if (output === outcome.output) return outcome;
    // A redacted copy of plain JSON is plain JSON.
    return isPlainJsonOutcome(outcome) ? plainJsonOutcome(output) : { ok: true, output };
  }
  const error = redactor.redact(outcome.error);
  return error === outcome.error ? outcome : { ...outcome, error };
}

/**
 * Wraps a toolset so that what its calls return, and the reasons its status
 * gives, carry no known secret of the calling org (`redactor.forOrg`; another
 * org's values are not recognised, see SecretRedactor): the runtime stores outcomes in calls,
 * history and events, and sends them to the model, so they are blanked
 * before any of that. One wrapper for every toolset (files, workers, MCP),
 * applied by the ToolRegistry.
 *
 * Every member that hands out an outcome is overridden here; everything else
 * passes through to the toolset itself (a Proxy, so members added to Toolset
 * later keep working). A new member that returns outcomes belongs in this list.
 */
export function redactingToolset(inner: Toolset, redactor: SecretRedactor): Toolset {
  const overrides: Partial<Record<keyof Toolset, unknown>> = {
    call: async (tool: string, args: unknown, ctx: ToolCallContext) =>
      redactOutcome(await inner.call(tool, args, ctx), redactor.forOrg(ctx.org)),
  };
  if (inner.callInTransaction) {
    overrides.callInTransaction = async (tx: Tx, tool: string, args: unknown, ctx: ToolCallContext) =>
      redactOutcome(await inner.callInTransaction!(tx, tool, args, ctx), redactor.forOrg(ctx.org));
  }
  if (inner.recall) {
    overrides.recall = async (question: RecallQuestion, scope: ToolScope) => {
      const answer = await inner.recall!(question, scope);
      return answer.known ? { ...answer, outcome: redactOutcome(answer.outcome, redactor.forOrg(scope.org)) } : answer;
    };
  }
  if (inner.status) {
    overrides.status = (scope: ToolScope) =>
      inner.status!(scope).map((s) => (s.reason === undefined ? s : { ...s, reason: redactor.forOrg(scope.org).redact(s.reason) }));
  }
  return new Proxy(inner, {
    get(target, key) {
      if (Object.hasOwn(overrides, key)) return overrides[key as keyof Toolset];
      const value: unknown = Reflect.get(target, key, target);
      return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
}
