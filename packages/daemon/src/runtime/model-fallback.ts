import type { AgentDefinition } from "../config/types.js";
import type { AgentDriver } from "./agent-driver.js";
import { ModelCallError } from "./call-model.js";
import type { ResolvedModelRef } from "./types.js";

/**
 * An agent's models in the order they are tried: `model: [a, b]` tries b
 * when a fails with an error that is not the request's fault. Undefined
 * stands for config.yaml's default model.
 */
export function modelRefs(def: Pick<AgentDefinition, "model">): (string | undefined)[] {
  return Array.isArray(def.model) ? def.model : [def.model];
}

/** The model a turn calls first (the one `model.called` names). */
export function firstModel(d: AgentDriver): ResolvedModelRef {
  return d.hooks.resolveModel(modelRefs(d.def)[0], d.def);
}

/**
 * The smallest context window among the agent's models: a prompt compacted
 * to fit it fits whichever model ends up answering.
 */
export function smallestWindow(d: AgentDriver): number | undefined {
  const windows = modelRefs(d.def)
    .map((ref) => d.hooks.resolveModel(ref, d.def).contextWindow)
    .filter((w): w is number => w !== undefined);
  return windows.length > 0 ? Math.min(...windows) : undefined;
}

/**
 * Whether the next model should be tried after `err`. Yes when the provider
 * failed in a way that trying again later could fix (5xx, overload, timeouts,
 * the network, rate limits past the model's own retries), and when it refused
 * the credentials (401, 403): a bad or revoked key is the operator's problem
 * with that provider, not the prompt's, and the next model has its own.
 * No for a request the provider refused as such (400, 404, 413, 422: a
 * malformed request or a prompt too long), which would fail on the next
 * model too, so it ends the turn instead.
 */
export function fallsBack(err: unknown): boolean {
  if (!(err instanceof ModelCallError)) return false;
  return err.retryable || err.status === 401 || err.status === 403;
}

/**
 * Runs `attempt` with each of the agent's models in turn until one answers.
 * Each move to the next model is recorded as `model.fell_back` before it is
 * made; the last model's error is the one that ends the turn.
 */
export async function withFallback<T>(
  d: AgentDriver,
  run: string,
  iteration: number,
  attempt: (model: ResolvedModelRef) => Promise<T>,
): Promise<{ value: T; model: ResolvedModelRef }> {
  const refs = modelRefs(d.def);
  for (let i = 0; ; i++) {
    const model = d.hooks.resolveModel(refs[i], d.def);
    try {
      return { value: await attempt(model), model };
    } catch (err) {
      if (i + 1 >= refs.length || !fallsBack(err)) throw err;
      const failed = err as ModelCallError;
      const next = d.hooks.resolveModel(refs[i + 1], d.def);
      // The store redacts known secret values from event data: a provider's error quoting a key is stored without it.
      await d.store.tx(async (w) => {
        w.emit(
          d.ref,
          "model.fell_back",
          {
            from: model.ref,
            to: next.ref,
            iteration,
            error: failed.message,
            ...(failed.status !== undefined ? { status: failed.status } : {}),
            code: "model_error",
            retryable: failed.retryable,
          },
          { run },
        );
      }, d.org);
      // Text the failed model streamed is void: followers are told to drop it.
      d.hooks.onDelta?.(d.ref, run, "", true, {
        attempt: 1,
        delay_ms: 0,
        error: `${model.ref} failed (${failed.message}); trying ${next.ref}`,
      });
    }
  }
}
