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
 * Whether the next model should be tried after `err`: the provider failed
 * in a way that trying again later could fix (5xx, overload, timeouts, the
 * network, rate limits past the model's own retries). A request the provider
 * refused as such (400, 401, a prompt too long) would fail on the next one
 * too, so it ends the turn instead.
 */
export function fallsBack(err: unknown): boolean {
  return err instanceof ModelCallError && err.retryable;
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
      const next = d.hooks.resolveModel(refs[i + 1], d.def);
      const error = (err as ModelCallError).message;
      await d.store.tx(async (w) => {
        w.emit(d.ref, "model.fell_back", { from: model.ref, to: next.ref, iteration, error, code: "model_error", retryable: true }, { run });
      });
      // Text the failed model streamed is void: followers are told to drop it.
      d.hooks.onDelta?.(d.id, run, "", true, { attempt: 1, delay_ms: 0, error: `${model.ref} failed (${error}); trying ${next.ref}` });
    }
  }
}
