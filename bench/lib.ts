import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createScriptedModel, type Script } from "@wardrik/testing";
import {
  EventBus,
  FilesToolset,
  Runtime,
  SqliteDb,
  Store,
  ToolRegistry,
  systemClock,
  ulidIds,
  type RuntimeHooks,
  type OpenedDb,
  type StoredEvent,
  type Toolset,
} from "wardrik";

/** The benchmark tool: read-only, answers at once. */
export const fastTool: Toolset = {
  namespace: "bench",
  list: () => [
    {
      name: "bench/lookup",
      description: "Look an ID up.",
      inputSchema: { type: "object", properties: { id: { type: "string" } } },
      readOnly: true,
      idempotent: true,
    },
  ],
  call: (_tool, args) => Promise.resolve({ ok: true, output: { id: (args as { id?: string }).id ?? "x", status: "ok" } }),
};

export interface BenchRuntime {
  runtime: Runtime;
  store: Store;
  bus: EventBus;
  close(): Promise<void>;
}

/** The engine's hooks of every benchmark: the scripted `model` at a small model's price, every call allowed, no budget. */
export function benchHooks(model: ReturnType<typeof createScriptedModel>): RuntimeHooks {
  return {
    resolveModel: () => ({ ref: "script/bench", model, price: { input: 0.15, output: 0.6 } }),
    decide: () => ({ decision: "allow", reason: "bench" }),
    budget: () => ({}),
  };
}

/**
 * The daemon's runtime in this process: SQLite on disk (WAL), or the database
 * given (PostgreSQL), the scripted model, no HTTP.
 */
export function benchRuntime(
  script: Script,
  opts: { synchronous?: "NORMAL" | "FULL"; delayMs?: number; db?: OpenedDb } = {},
): BenchRuntime {
  const dir = mkdtempSync(join(tmpdir(), "wardrik-bench-"));
  const db = opts.db ?? new SqliteDb(join(dir, "bench.db"), { synchronous: opts.synchronous ?? "NORMAL" });
  const bus = new EventBus();
  const store = new Store(db, bus, ulidIds(), systemClock);
  const model = createScriptedModel(script, { modelId: "bench", ...(opts.delayMs !== undefined ? { delayMs: opts.delayMs } : {}) });
  const registry = new ToolRegistry();
  registry.add(new FilesToolset(db, systemClock));
  registry.add(fastTool);
  const runtime = new Runtime(store, registry, benchHooks(model), {});
  return {
    runtime,
    store,
    bus,
    close: async () => {
      await runtime.close();
      await db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

export function agentDef(name: string) {
  return {
    name,
    description: "bench agent",
    title: name,
    tools: ["bench/*"],
    max_iterations: 20,
    timeout: 600,
    retries: 0,
    idle_timeout: "infinity" as const,
    instructions: "You are a benchmark agent.",
  };
}

/** Resolves when the turn that took `message` ends, whether or not it already has. */
export function turnEnd(bus: EventBus, agentId: string): (message: string) => Promise<StoredEvent> {
  const waiting = new Map<string, (e: StoredEvent) => void>();
  const ended = new Map<string, StoredEvent>();
  const messagesOf = new Map<string, string[]>();
  bus.subscribe(agentId, (e) => {
    if (e.type === "dev.wardrik.turn.started") {
      messagesOf.set(e.run!, e.data.messages as string[]);
    } else if (e.type === "dev.wardrik.turn.completed" || e.type === "dev.wardrik.turn.failed") {
      for (const m of messagesOf.get(e.run!) ?? []) {
        const w = waiting.get(m);
        if (w) {
          waiting.delete(m);
          w(e);
        } else ended.set(m, e);
      }
      messagesOf.delete(e.run!);
    }
  });
  return (message) => {
    const done = ended.get(message);
    if (done) {
      ended.delete(message);
      return Promise.resolve(done);
    }
    return new Promise((resolve) => waiting.set(message, resolve));
  };
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

export function rssMb(): number {
  return Math.round((process.memoryUsage().rss / 1024 / 1024) * 10) / 10;
}

export class PeakRss {
  peak = 0;
  private timer = setInterval(() => (this.peak = Math.max(this.peak, process.memoryUsage().rss)), 20);
  stop(): number {
    clearInterval(this.timer);
    this.peak = Math.max(this.peak, process.memoryUsage().rss);
    return Math.round((this.peak / 1024 / 1024) * 10) / 10;
  }
}
