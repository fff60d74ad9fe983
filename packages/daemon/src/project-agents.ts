/**
 * A project's agent files as the daemon loads them, at start and on every
 * `wardrik reload`: each file checked against the policies and models it
 * names (every problem of a file listed, not only the first), and the
 * models those names resolve to, kept until a reload reads scripts/ again.
 */
import { join } from "node:path";
import type { Script } from "@wardrik/testing/scripted-model";
import { loadAgentsDir, type AgentDefinition, type ProjectConfig } from "./config/index.js";
import { keyLocation } from "./config/key-location.js";
import type { ReferenceSources } from "./config/references.js";
import { resolveModel, type ModelProvider } from "./models/resolve-model.js";
import type { CompiledPolicy } from "./policy/index.js";
import type { Policy } from "./policy/types.js";
import type { FileAgent } from "./runtime/runtime.js";
import { modelRefs } from "./runtime/model-fallback.js";
import type { ResolvedModelRef } from "./runtime/types.js";
import type { SecretRedactor } from "./secrets/redactor.js";

export type ProjectPolicies = Map<string, { policy: Policy; compiled: CompiledPolicy } | { error: string }>;

/** A model an agent uses that will fail every call (no API key): the agent loads, and this says why its turns would fail. */
export interface ModelWarning {
  agent: string;
  model: string;
  reason: string;
}

type ProjectModel = ResolvedModelRef & { provider: ModelProvider; problem?: string | undefined };

export class ProjectAgents {
  private readonly models = new Map<string, ProjectModel>();

  constructor(
    private readonly o: {
      dir: string;
      config: ProjectConfig;
      env: NodeJS.ProcessEnv;
      scripts?: Record<string, Script> | undefined;
      policies: ProjectPolicies;
      redactor: SecretRedactor;
    },
  ) {}

  /** The model a reference names, made once (a reload makes script models again: their files may have changed). */
  modelFor(ref: string): ProjectModel {
    let m = this.models.get(ref);
    if (!m) {
      const r = resolveModel(ref, this.o.config, { env: this.o.env, ...(this.o.scripts ? { scripts: this.o.scripts } : {}) });
      m = { ref, provider: r.provider, model: r.model, contextWindow: r.contextWindow, price: r.price, problem: r.problem };
      this.models.set(ref, m);
    }
    return m;
  }

  /** Every model made so far (their provider packages load once the daemon listens). */
  resolvedModels(): IterableIterator<ProjectModel> {
    return this.models.values();
  }

  /**
   * Reads agents/ again (triggers' `${secret:NAME}` looked up with `secrets`:
   * the value, or why a stored one cannot be decrypted), and scripts/: a
   * turn's next model call plays the script as it is now.
   */
  read(secrets: Pick<ReferenceSources, "secret" | "unreadableSecret">): { agents: FileAgent[]; modelWarnings: ModelWarning[] } {
    for (const [ref, m] of this.models) if (m.provider === "script") this.models.delete(ref);
    const modelWarnings: ModelWarning[] = [];
    const references = { env: this.o.env, ...secrets };
    const agents = loadAgentsDir(this.o.dir, { references }).map((a): FileAgent => {
      if (!a.definition) {
        // The policy and model a broken file names may be wrong too: say so at once, not after the next fix.
        const more = a.named ? this.checkReferences({ ...a.named }, a.file) : [];
        return { name: a.name, file: a.file, error: [a.error ?? "unreadable", ...more].join("\n") };
      }
      // A webhook secret written into the file itself must not show in the agent's events either.
      for (const t of a.definition.triggers ?? [])
        if ("webhook" in t && !t.secret.includes("${")) this.o.redactor.add(t.secret, undefined, this.o.config.org);
      const problems = this.checkReferences(a.definition, a.file);
      if (problems.length > 0) return { name: a.name, file: a.file, error: problems.join("\n") };
      for (const own of modelRefs(a.definition)) {
        const ref = own ?? this.o.config.model;
        const problem = ref === undefined ? undefined : this.modelFor(ref).problem;
        if (ref !== undefined && problem !== undefined) modelWarnings.push({ agent: a.name, model: ref, reason: problem });
      }
      return { name: a.name, file: a.file, definition: a.definition };
    });
    return { agents, modelWarnings };
  }

  /** Every problem with the policy and the model an agent names (its own or config.yaml's default). */
  private checkReferences(def: Pick<AgentDefinition, "policy" | "model">, file: string): string[] {
    const { dir, config, policies } = this.o;
    const problems: string[] = [];
    // Where the name was written: the agent file's key, or config.yaml's default.
    const where = (key: "policy" | "model", own: string | undefined) =>
      own !== undefined ? keyLocation(join(dir, file), file, key) : keyLocation(join(dir, "config.yaml"), "config.yaml", key);
    const policyName = def.policy ?? config.policy;
    const p = policyName ? policies.get(policyName) : undefined;
    if (policyName && !p)
      problems.push(
        `${where("policy", def.policy)}: policy "${policyName}" does not exist (policies/ has ${[...policies.keys()].join(", ") || "no policies"})`,
      );
    else if (p && "error" in p) problems.push(`${where("policy", def.policy)}: policy "${policyName}" is invalid: ${p.error}`);
    else if (p) {
      for (const rule of p.policy.rules) {
        if (!rule.judge) continue;
        try {
          this.modelFor(rule.judge.model);
        } catch (err) {
          problems.push(`${rule.source ?? `policies/${policyName}.yaml`}: judge.model "${rule.judge.model}": ${(err as Error).message}`);
        }
      }
    }
    // Every model of a list (`model: [a, b]`) must exist: a fallback found broken only when the first fails is found too late.
    for (const own of modelRefs(def)) {
      const ref = own ?? config.model;
      if (!ref) {
        problems.push(`${file}: no model: set model in the agent file or a default model in config.yaml`);
        continue;
      }
      try {
        this.modelFor(ref);
      } catch (err) {
        problems.push(`${where("model", own)}: model "${ref}": ${(err as Error).message}`);
      }
    }
    return problems;
  }
}
