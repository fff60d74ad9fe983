import type { SecretRedactor } from "../secrets/redactor.js";
import type { ToolOutcome, Toolset } from "./toolset.js";

/** A tool outcome with known secret values blanked from its output or error; the same object when none occur. */
export function redactOutcome(outcome: ToolOutcome, redactor: SecretRedactor): ToolOutcome {
  if (outcome.ok) {
    const output = redactor.redactValue(outcome.output);
    return output === outcome.output ? outcome : { ok: true, output };
  }
  const error = redactor.redact(outcome.error);
  return error === outcome.error ? outcome : { ...outcome, error };
}

/**
 * Wraps a toolset so that what its calls return, and the reasons its status
 * gives, carry no known secret: the runtime stores outcomes in calls,
 * history and events, and sends them to the model, so they are blanked
 * before any of that. One wrapper for every toolset (files, workers, MCP),
 * applied by the ToolRegistry.
 */
export function redactingToolset(inner: Toolset, redactor: SecretRedactor): Toolset {
  const wrapped: Toolset = {
    namespace: inner.namespace,
    list: (scope) => inner.list(scope),
    call: async (tool, args, ctx) => redactOutcome(await inner.call(tool, args, ctx), redactor),
  };
  if (inner.waitFor) wrapped.waitFor = (tool, scope, timeoutMs) => inner.waitFor!(tool, scope, timeoutMs);
  if (inner.release) wrapped.release = (scope) => inner.release!(scope);
  if (inner.status) {
    wrapped.status = (scope) => inner.status!(scope).map((s) => (s.reason === undefined ? s : { ...s, reason: redactor.redact(s.reason) }));
  }
  return wrapped;
}
