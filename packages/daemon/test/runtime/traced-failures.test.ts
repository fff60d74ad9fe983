/**
 * Spans of work that fails: the engine reports a model or tool call as it
 * starts and as it ends, so work that throws must still end its span, with
 * an ERROR status and the `error.type` the GenAI conventions ask for. And
 * recording never fails the work itself. Real tracing (the OpenTelemetry
 * SDK's batch processor and OTLP exporter) into a real OTLP/HTTP receiver.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { Tx } from "../../src/store/db.js";
import { startTracing, type DaemonTracing } from "../../src/telemetry/start-tracing.js";
import type { ToolCallContext, ToolOutcome } from "../../src/tools/toolset.js";
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from "../helpers/otlp-receiver.js";
import { createHarness, FnToolset, type Harness } from "../helpers/runtime-harness.js";

const ERROR = 2;

let receiver: OtlpReceiver;
beforeAll(async () => {
  receiver = await startOtlpReceiver();
});
afterAll(async () => {
  await receiver.close();
});

let h: Harness | undefined;
let tracing: DaemonTracing | undefined;
afterEach(async () => {
  await tracing?.shutdown();
  await h?.close();
  h = tracing = undefined;
});

/** A harness whose engine reports to real tracing, exporting to the receiver. */
async function tracedHarness(toolsets: FnToolset[] = [], env: Record<string, string> = {}): Promise<Harness> {
  return createHarness({
    toolsets,
    telemetry: async ({ store, bus }) => {
      const otel = { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: "20", ...env };
      tracing = await startTracing(undefined, otel, { store, bus, log: () => undefined, redact: (t) => t, version: "test" });
      return tracing.telemetry;
    },
  });
}

/** The spans of turn `run` once its root span arrived: the root and its children by name. */
async function turnSpans(run: string): Promise<{ root: ReceivedSpan; named: (name: string) => ReceivedSpan[] }> {
  const isRoot = (s: ReceivedSpan) => s.name.startsWith("invoke_agent ") && s.attributes["wardrik.turn.id"] === run;
  const all = await receiver.waitForSpans((spans) => spans.some(isRoot), `the root span of ${run}`);
  const root = all.find(isRoot)!;
  const trace = all.filter((s) => s.traceId === root.traceId);
  return { root, named: (name) => trace.filter((s) => s.name === name) };
}

/** A toolset whose tool runs inside the commit of its result and throws there (a database that refuses the write). */
class ThrowingInTransaction extends FnToolset {
  constructor() {
    super("ledger");
    this.add("post", () => ({ ok: true, output: "never" }));
  }

  callInTransaction(_tx: Tx, _tool: string, _args: unknown, _ctx: ToolCallContext): Promise<ToolOutcome> {
    class LedgerLocked extends Error {
      override name = "LedgerLocked";
    }
    return Promise.reject(new LedgerLocked("the ledger is locked"));
  }
}

describe("spans of work that fails", () => {
  it("a model call that fails ends its chat span with an error status and error.type model_error, under the failed turn's root", async () => {
    h = await tracedHarness();
    const a = await h.agent({ name: "a", script: { steps: [{ error: { status: 400, message: "bad tool schema" } }] } });
    const end = await h.ask(a, "hi");
    expect(end.type).toBe("dev.wardrik.turn.failed");
    const { root, named } = await turnSpans(end.run!);
    const [chat] = named("chat a");
    expect(chat).toBeDefined();
    expect(chat!.parentSpanId).toBe(root.spanId);
    expect(chat!.status.code).toBe(ERROR);
    expect(chat!.attributes["error.type"]).toBe("model_error");
    expect(chat!.endMs).toBeGreaterThanOrEqual(chat!.startMs);
    expect(root.status.code).toBe(ERROR);
    expect(root.attributes["error.type"]).toBe("model_error");
  });

  it("a model call stopped by the turn's timeout ends its chat span with error.type timeout", async () => {
    h = await tracedHarness();
    const a = await h.agent({ name: "a", timeout: 0.3, script: { steps: [{ hang: true }] } });
    const end = await h.ask(a, "wait");
    expect(end.type).toBe("dev.wardrik.turn.failed");
    const [chat] = (await turnSpans(end.run!)).named("chat a");
    expect(chat!.status.code).toBe(ERROR);
    expect(chat!.attributes["error.type"]).toBe("timeout");
  });

  it("a tool that throws ends its execute_tool span with an error status and the error's type; the turn fails as internal", async () => {
    h = await tracedHarness([new ThrowingInTransaction()]);
    const a = await h.agent({ name: "a", script: { steps: [{ tool_calls: [{ tool: "ledger/post", args: {} }] }, { text: "done" }] } });
    const end = await h.ask(a, "post it");
    expect(end.type).toBe("dev.wardrik.turn.failed");
    expect(end.data.code).toBe("internal");
    const { root, named } = await turnSpans(end.run!);
    const [tool] = named("execute_tool ledger/post");
    expect(tool).toBeDefined();
    expect(tool!.parentSpanId).toBe(root.spanId);
    expect(tool!.status.code).toBe(ERROR);
    expect(tool!.attributes["error.type"]).toBe("LedgerLocked");
    expect(tool!.attributes["wardrik.call.outcome"]).toBeUndefined();
  });

  it("with content captured, a tool result that is not JSON fails the call (bad_result), not the turn", async () => {
    const odd = new FnToolset("odd").add("count", () => ({ ok: true, output: { n: 1n } }));
    h = await tracedHarness([odd], { OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: "true" });
    const a = await h.agent({ name: "a", script: { steps: [{ tool_calls: [{ tool: "odd/count", args: {} }] }, { text: "counted" }] } });
    const end = await h.ask(a, "count");
    expect(end.type).toBe("dev.wardrik.turn.completed");
    const failed = h.events.find((e) => e.run === end.run && e.type === "dev.wardrik.call.failed");
    expect(failed?.data.code).toBe("bad_result");
    const [tool] = (await turnSpans(end.run!)).named("execute_tool odd/count");
    expect(String(tool!.attributes["gen_ai.tool.call.result"])).toMatch(/^\[not JSON-serialisable: /);
    expect(tool!.attributes["gen_ai.tool.call.arguments"]).toBe("{}");
  });
});
