import type { ProjectConfig } from "../config/index.js";
import type { Clock } from "../ids.js";
import type { Logger } from "../log/logger.js";
import { resolveModel } from "../models/resolve-model.js";
import type { Policy } from "../policy/index.js";
import type { SecretRedactor } from "../secrets/redactor.js";
import type { AgentRow, Store } from "../store/store.js";
import type { ToolRegistry } from "../tools/tool-registry.js";
import type { Script } from "@wardrik/testing/scripted-model";
import type { ReplayReport } from "@wardrik/protocol";
import { runReplay, type ReplayDeps, type ReplayInput } from "./run-replay.js";

/** Replays as the daemon runs them: its config's models (a new instance per replay), its loaded policies, its store and tools. */
export function daemonReplay(d: {
  store: Store;
  registry: ToolRegistry;
  config: ProjectConfig;
  env: NodeJS.ProcessEnv;
  scripts: Record<string, Script> | undefined;
  policies: ReadonlyMap<string, { policy: Policy } | { error: string }>;
  toolTimeoutMs: number;
  clock: Clock;
  log: Logger;
  redactor: SecretRedactor;
}): (row: AgentRow, input: ReplayInput) => Promise<ReplayReport> {
  const deps: ReplayDeps = {
    store: d.store,
    registry: d.registry,
    model: (ref) => {
      const r = resolveModel(ref, d.config, { env: d.env, ...(d.scripts ? { scripts: d.scripts } : {}) });
      return { ref, model: r.model, contextWindow: r.contextWindow, price: r.price };
    },
    defaultModel: d.config.model,
    policy: (name) => {
      const p = d.policies.get(name);
      return p === undefined || "error" in p ? p : p.policy;
    },
    defaultPolicy: d.config.policy,
    toolTimeoutMs: d.toolTimeoutMs,
    clock: d.clock,
    log: d.log,
    // The scratch agent is of the replaying org: its values only, as in its own events.
    redact: (data, org) => d.redactor.forOrg(org).redactValue(data),
  };
  return (row, input) => runReplay(deps, row, input);
}
