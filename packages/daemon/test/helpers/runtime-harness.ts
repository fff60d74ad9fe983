import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createScriptedModel, type Script, type ScriptedModel } from "@wardrik/testing";
import { AGENT_DEFAULTS, type AgentDefinition } from "../../src/config/types.js";
import { EventBus, type StoredEvent } from "../../src/events/event-bus.js";
import { systemClock, ulidIds } from "../../src/ids.js";
import { compilePolicy, decide, type CompiledPolicy } from "../../src/policy/index.js";
import type { Policy } from "../../src/policy/types.js";
import type { Logger } from "../../src/log/logger.js";
import { Runtime } from "../../src/runtime/runtime.js";
import type { MemoryCollectOptions } from "../../src/runtime/sleep-keeper.js";
import type { Telemetry } from "../../src/runtime/telemetry.js";
import type { RuntimeHooks } from "../../src/runtime/types.js";
import { Store, type AgentRow } from "../../src/store/store.js";
import { FilesToolset } from "../../src/tools/files-toolset.js";
import { PersonToolset } from "../../src/tools/person-toolset.js";
import { plainJsonOutcome } from "../../src/tools/plain-json.js";
import { ToolRegistry } from "../../src/tools/tool-registry.js";
import type { ToolCallContext, ToolInfo, ToolOutcome, Toolset } from "../../src/tools/toolset.js";
import type { StatementGate } from "./statement-gate.js";
import { openTestDb } from "./test-database.js";

/** A toolset whose tools are plain functions, for runtime tests. */
export class FnToolset implements Toolset {
  readonly tools = new Map<string, { info: ToolInfo; run: (args: unknown, ctx: ToolCallContext) => Promise<ToolOutcome> | ToolOutcome }>();
  constructor(readonly namespace: string) {}

  add(
    name: string,
    run: (args: unknown, ctx: ToolCallContext) => Promise<ToolOutcome> | ToolOutcome,
    flags: { readOnly?: boolean; idempotent?: boolean } = {},
  ): this {
    this.tools.set(name, {
      info: {
        name: `${this.namespace}/${name}`,
        description: `test tool ${name}`,
        inputSchema: { type: "object", properties: {}, additionalProperties: true },
        readOnly: flags.readOnly ?? false,
        idempotent: flags.idempotent ?? false,
      },
      run,
    });
    return this;
  }

  list(): ToolInfo[] {
    return [...this.tools.values()].map((t) => t.info);
  }

  async call(tool: string, args: unknown, ctx: ToolCallContext): Promise<ToolOutcome> {
    const t = this.tools.get(tool);
    if (!t) return { ok: false, error: `no tool ${tool}` };
    return t.run(args, ctx);
  }
}

export interface Harness {
  dir: string;
  /** The SQLite file (a harness on SQLite only; WARDRIK_TEST_DB picks the database). */
  dbPath: string;
  /** The database, as config.yaml would name it: sqlite:PATH or postgres://... */
  databaseUrl: string;
  store: Store;
  runtime: Runtime;
  bus: EventBus;
  registry: ToolRegistry;
  models: Map<string, ScriptedModel>;
  events: StoredEvent[];
  agent(def: Partial<AgentDefinition> & { name: string; script: Script }): Promise<AgentRow>;
  /** Registers the script of an agent that already exists (after a restart). */
  script(name: string, script: Script): void;
  /** Resolves with the turn's end event. */
  ask(agent: AgentRow, text: string, conversation?: string): Promise<StoredEvent>;
  waitFor(pred: (e: StoredEvent) => boolean, timeoutMs?: number): Promise<StoredEvent>;
  close(): Promise<void>;
}

export interface HarnessOptions {
  dir?: string;
  policy?: Policy | null;
  toolsets?: Toolset[];
  toolTimeoutMs?: number;
  /** The runtime's worker grace (config `worker_grace`); 5 s here, shorter than the daemon's default. */
  workerGraceMs?: number;
  synchronous?: "NORMAL" | "FULL";
  sleepCheckMs?: number;
  memoryCollect?: MemoryCollectOptions;
  log?: Logger;
  /** What the engine reports turns, model calls and tool calls to (tracing), made with the harness's store and bus. */
  telemetry?: (deps: { store: Store; bus: EventBus }) => Promise<Telemetry>;
  /** Statements of the store and the files tool pass this gate (a test holds one to make a race happen; statement-gate.ts). */
  gate?: StatementGate;
}

export async function createHarness(options: HarnessOptions = {}): Promise<Harness> {
  const dir = options.dir ?? mkdtempSync(join(tmpdir(), "wardrik-rt-"));
  const dbPath = join(dir, "wardrik.db");
  // A harness made again on the same dir (a restart) gets the same database.
  const { db, database } = await openTestDb({ dir, synchronous: options.synchronous ?? "NORMAL" });
  const used = options.gate ? options.gate.wrap(db) : db;
  const bus = new EventBus();
  const store = new Store(used, bus, ulidIds(), systemClock);
  const events: StoredEvent[] = [];
  bus.subscribe("*", (e) => events.push(e));
  const models = new Map<string, ScriptedModel>();
  const scripts = new Map<string, Script>();
  // Tests that are not about governance allow every call; pass `policy: null` for the bare defaults.
  const policy = options.policy === undefined ? { name: "allow-all", rules: [{ tool: "*", decision: "allow" as const }] } : options.policy;
  const compiled: CompiledPolicy | undefined = policy ? compilePolicy(policy) : undefined;
  const hooks: RuntimeHooks = {
    resolveModel: (ref) => {
      const name = ref ?? "default";
      let m = models.get(name);
      if (!m) {
        const script = scripts.get(name);
        if (!script) throw new Error(`no script ${name}`);
        m = createScriptedModel(script, { modelId: name });
        models.set(name, m);
      }
      return { ref: `script/${name}`, model: m, price: { input: 1, output: 2 } };
    },
    decide: (call) => decide(compiled, { tool: call.tool, args: call.args, readOnly: call.readOnly }),
    budget: (def) => ({
      per_turn_usd: options.policy?.budget?.per_turn_usd,
      per_day_usd: def.budget ?? options.policy?.budget?.per_day_usd,
    }),
  };
  const registry = new ToolRegistry();
  registry.add(new FilesToolset(used, systemClock));
  registry.add(new PersonToolset());
  for (const t of options.toolsets ?? []) registry.add(t);
  const runtime = new Runtime(store, registry, hooks, {
    toolTimeoutMs: options.toolTimeoutMs ?? 60_000,
    reconnectGraceMs: options.workerGraceMs ?? 5_000,
    modelBackoffMs: 5,
    sleepCheckMs: options.sleepCheckMs ?? 1000,
    ...(options.memoryCollect ? { memoryCollect: options.memoryCollect } : {}),
    ...(options.log ? { log: options.log } : {}),
    ...(options.telemetry ? { telemetry: await options.telemetry({ store, bus }) } : {}),
  });

  // Waits still open when the harness closes are dropped with it: a test that left one
  // un-awaited (an ask it did not follow to the end) must not fail a later file with its timeout.
  const openWaits = new Set<() => void>();
  const waitFor = (pred: (e: StoredEvent) => boolean, timeoutMs = 10_000) =>
    new Promise<StoredEvent>((resolve, reject) => {
      const found = events.find(pred);
      if (found) return resolve(found);
      const drop = () => {
        clearTimeout(timer);
        off();
        openWaits.delete(drop);
      };
      const timer = setTimeout(() => {
        drop();
        reject(new Error("timed out waiting for an event"));
      }, timeoutMs);
      const off = bus.subscribe("*", (e) => {
        if (pred(e)) {
          drop();
          resolve(e);
        }
      });
      openWaits.add(drop);
    });

  return {
    dir,
    dbPath,
    databaseUrl: database.url,
    store,
    runtime,
    bus,
    registry,
    models,
    events,
    agent: async ({ script, ...def }) => {
      scripts.set(def.name, script);
      const full: AgentDefinition = {
        description: "test agent",
        title: def.name,
        tools: ["*"],
        max_iterations: AGENT_DEFAULTS.max_iterations,
        timeout: AGENT_DEFAULTS.timeout,
        retries: AGENT_DEFAULTS.retries,
        idle_timeout: AGENT_DEFAULTS.idle_timeout,
        instructions: "You are a test agent.",
        model: def.name,
        ...def,
      };
      return runtime.createAgent("default", full);
    },
    script: (name, script) => void scripts.set(name, script),
    ask: async (agent, text, conversation = "main") => {
      const q = await runtime.enqueue(agent, conversation, text);
      const started = await waitFor(
        (e) => e.type === "dev.wardrik.turn.started" && ((e.data.messages as string[]) ?? []).includes(q.message),
      );
      return waitFor((e) => e.run === started.run && /turn\.(completed|failed|cancelled)$/.test(e.type));
    },
    waitFor,
    close: async () => {
      for (const drop of [...openWaits]) drop();
      await runtime.close();
      await db.close();
      if (!options.dir) {
        await database.drop();
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}

export function types(events: StoredEvent[], run?: string): string[] {
  return events.filter((e) => !run || e.run === run).map((e) => e.type.replace("dev.wardrik.", ""));
}

/**
 * A harness whose agent `a` calls every tool of `outputs` (namespace `t`, each
 * answering its output, as plain JSON for the names in `plain`) in one round,
 * then answers "done"; resolves once that turn ended.
 */
export async function turnWithOutputs(
  outputs: Record<string, unknown>,
  plain: string[] = [],
): Promise<{ h: Harness; agent: AgentRow; end: StoredEvent }> {
  const tools = new FnToolset("t");
  for (const [name, output] of Object.entries(outputs))
    tools.add(name, () => (plain.includes(name) ? plainJsonOutcome(output) : { ok: true, output }), { readOnly: true });
  const h = await createHarness({ toolsets: [tools] });
  const calls = Object.keys(outputs).map((name) => ({ tool: `t/${name}`, args: {} }));
  const agent = await h.agent({ name: "a", tools: ["t/*"], script: { steps: [{ tool_calls: calls }, { text: "done" }] } });
  return { h, agent, end: await h.ask(agent, "go") };
}
