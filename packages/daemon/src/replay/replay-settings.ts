import { WardrikError, type ReplayBody } from "@wardrik/protocol";
import type { z } from "zod";
import { parseAgentFile } from "../config/index.js";
import type { AgentDefinition } from "../config/types.js";
import type { Clock } from "../ids.js";
import type { Logger } from "../log/logger.js";
import { compilePolicy, decide, parsePolicyFile, type Policy } from "../policy/index.js";
import { readDefinition } from "../runtime/agent-admin.js";
import { budgetCaps } from "../runtime/budget.js";
import { modelRefs } from "../runtime/model-fallback.js";
import type { ResolvedModelRef, RuntimeHooks } from "../runtime/types.js";
import type { AgentRow, Store } from "../store/store.js";
import type { ToolRegistry } from "../tools/tool-registry.js";

export type ReplayInput = z.output<typeof ReplayBody>;

/** What a replay needs of the daemon. It only reads the daemon's store; live tools are the only way out. */
export interface ReplayDeps {
  store: Store;
  /** The daemon's tools: listed for the model, and run only for calls named live. */
  registry: ToolRegistry;
  /** A new instance of a model (never one an agent is using), by a `models:` name or provider/model-id. */
  model(ref: string): ResolvedModelRef;
  /** config.yaml's `model`. */
  defaultModel: string | undefined;
  /** A policy of policies/ by name, the reason it cannot be used, or undefined when there is none of that name. */
  policy(name: string): Policy | { error: string } | undefined;
  /** config.yaml's `policy`. */
  defaultPolicy: string | undefined;
  toolTimeoutMs: number;
  clock: Clock;
  log: Logger;
  /** Applied to what the scratch copy stores (the org's secret values removed). */
  redact?: (data: unknown, org: string) => unknown;
}

/** The agent as the replay runs it: its definition, model and policy (each as given, or the agent's own), and the runtime's hooks. */
export interface ReplaySettings {
  definition: AgentDefinition;
  modelRef: string;
  policyName: string | null;
  hooks: RuntimeHooks;
}

export function replaySettings(deps: ReplayDeps, agent: AgentRow, input: ReplayInput): ReplaySettings {
  const base = input.agent_file
    ? { ...parseAgentFile(input.agent_file.text, input.agent_file.file), name: agent.name }
    : readDefinition(agent);
  // A replay runs one model: the one asked for, or the first of the agent's list (`model: [a, b]`).
  const modelRef = input.model ?? modelRefs(base)[0] ?? deps.defaultModel;
  if (!modelRef) throw new WardrikError("bad_request", `Agent ${agent.name} names no model and config.yaml sets none: pass a model.`);
  // One instance per ref for the whole replay, made on first use.
  const models = new Map<string, ResolvedModelRef>();
  const modelFor = (ref: string): ResolvedModelRef => {
    let m = models.get(ref);
    if (!m) {
      try {
        m = deps.model(ref);
      } catch (err) {
        throw new WardrikError("bad_request", `Model "${ref}" cannot be used: ${(err as Error).message}`);
      }
      models.set(ref, m);
    }
    return m;
  };
  modelFor(modelRef);
  const definition: AgentDefinition = { ...base, model: modelRef };
  const { name, policy } = choosePolicy(deps, definition, input);
  const compiled = policy ? compilePolicy(policy) : undefined;
  const hooks: RuntimeHooks = {
    resolveModel: (ref) => modelFor(ref ?? modelRef),
    decide: (call) => decide(compiled, { tool: call.tool, args: call.args, readOnly: call.readOnly }),
    budget: (def) => budgetCaps(policy?.budget, def.budget),
  };
  return { definition, modelRef, policyName: name, hooks };
}

function choosePolicy(deps: ReplayDeps, def: AgentDefinition, input: ReplayInput): { name: string | null; policy: Policy | undefined } {
  if (input.policy !== undefined && input.policy_file !== undefined) {
    throw new WardrikError("bad_request", "Give policy (a name in policies/) or policy_file (a file's text), not both.");
  }
  if (input.policy_file) {
    const policy = parsePolicyFile(input.policy_file.text, input.policy_file.file);
    return { name: input.policy_file.file, policy };
  }
  const name = input.policy ?? def.policy ?? deps.defaultPolicy;
  if (name === undefined) return { name: null, policy: undefined };
  const found = deps.policy(name);
  if (found === undefined) throw new WardrikError("bad_request", `There is no policy "${name}" in policies/.`);
  if ("error" in found) throw new WardrikError("bad_request", `Policy "${name}" cannot be used: ${found.error}`);
  return { name, policy: found };
}
