/**
 * One set-up of the telemetry benchmark (bench/telemetry.ts): the runtime in
 * process on a SQLite file of its own, with the telemetry a daemon would run:
 *
 * - bare:   no telemetry at all (the engine's no-op, no metrics);
 * - off:    what a daemon runs when no telemetry is configured (metrics, no-op tracing);
 * - traces: off plus traces exported over OTLP http/protobuf to `otlpUrl`.
 *
 * `turn(conversation)` runs one W1 turn (one tool call) and comes back to the
 * event loop before it returns, as a daemon does between requests.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createScriptedModel } from "@wardrik/testing";
import {
  EventBus,
  FilesToolset,
  Runtime,
  SqliteDb,
  Store,
  ToolRegistry,
  WardrikMetrics,
  startDaemonTelemetry,
  systemClock,
  ulidIds,
  type DaemonTelemetry,
} from "wardrik";
import { agentDef, benchHooks, fastTool, turnEnd } from "./lib.js";

export type Mode = "bare" | "off" | "traces";
export const MODES: Mode[] = ["bare", "off", "traces"];

export interface SetUp {
  mode: Mode;
  db: SqliteDb;
  metrics: WardrikMetrics | undefined;
  /** One turn; its latency in milliseconds. */
  turn(conversation: string): Promise<number>;
  /** Stops the runtime and exports what is buffered. */
  stop(): Promise<void>;
  /** Removes the database. */
  remove(): Promise<void>;
}

export async function setUp(mode: Mode, otlpUrl: string | undefined): Promise<SetUp> {
  const dir = mkdtempSync(join(tmpdir(), "wardrik-bench-telemetry-"));
  const db = new SqliteDb(join(dir, "bench.db"), { synchronous: "NORMAL" });
  const bus = new EventBus();
  const metrics = mode === "bare" ? undefined : new WardrikMetrics();
  const store = new Store(db, bus, ulidIds(), systemClock, metrics ? { onCommit: metrics.commitTook } : {});
  let telemetry: DaemonTelemetry | undefined;
  if (metrics) {
    // OTEL_* variables of the bench's own environment (a sampler, a batch size) apply to the traced runs.
    const own = Object.fromEntries(Object.entries(process.env).filter(([k]) => k.startsWith("OTEL_")));
    const env = mode === "traces" ? { OTEL_SERVICE_NAME: "wardrik-bench", ...own, OTEL_EXPORTER_OTLP_ENDPOINT: otlpUrl } : {};
    telemetry = await startDaemonTelemetry(undefined, env, {
      store,
      bus,
      metrics,
      log: () => undefined,
      redact: (t) => t,
      addSecret: () => undefined,
      workerConnections: () => new Map(),
      version: "bench",
    });
    if (mode === "traces" && !telemetry.tracing.settings) throw new Error("traces are not on");
  }
  const model = createScriptedModel(
    { steps: [{ tool_calls: [{ tool: "bench/lookup", args: { id: "id_0" } }] }, { text: "done" }] },
    { modelId: "bench" },
  );
  const registry = new ToolRegistry();
  registry.add(new FilesToolset(db, systemClock));
  registry.add(fastTool);
  const runtime = new Runtime(store, registry, benchHooks(model), telemetry ? { telemetry: telemetry.tracing.telemetry } : {});
  const agent = await runtime.createAgent("default", agentDef("bench"));
  const ended = turnEnd(bus, agent.id);
  return {
    mode,
    db,
    metrics,
    async turn(conversation) {
      const t0 = performance.now();
      const q = await runtime.enqueue(agent, conversation, "go");
      const end = await ended(q.message);
      if (end.type !== "dev.wardrik.turn.completed") throw new Error(`turn failed: ${JSON.stringify(end.data)}`);
      const ms = performance.now() - t0;
      // Back to the event loop between turns, as a daemon is between requests: a turn here runs on promises
      // alone, and without this the exporter's HTTP answers and the batch timer would wait for the end of the
      // run (spans piling up unsent, their export cost falling outside the measured passes).
      await new Promise((resolve) => setImmediate(resolve));
      return ms;
    },
    async stop() {
      await runtime.close();
      await telemetry?.close();
    },
    async remove() {
      await db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** CPU milliseconds of this process's main thread so far (Linux: /proc, in clock ticks of 10 ms); null elsewhere. */
export function mainThreadCpuMs(): number | null {
  try {
    const stat = readFileSync(`/proc/self/task/${process.pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return null;
  }
}
