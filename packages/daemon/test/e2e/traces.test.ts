/**
 * OpenTelemetry traces from the real daemon, received by a real OTLP/HTTP
 * server in this process: the GenAI span names and attributes of a turn,
 * trace context carried into a worker process (which has OpenTelemetry set
 * up) and across a daemon crash, both OTLP encodings, and log lines that
 * name the active span.
 */
import type { ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from "../helpers/otlp-receiver.js";
import { startFixtureWorker } from "../helpers/fixture-worker.js";
import { agentFile, createProject, short, waitFor, type TestProject } from "../helpers/spawn-daemon.js";

const LOOKUP = `steps:
  - tool_calls:
      - tool: workers/find_order
        args: { order_id: "{{message}}" }
  - text: "Found {{result}}"
`;

const WRITE_NOTE = `steps:
  - tool_calls:
      - tool: files/write
        args: { path: notes/today.md, content: "{{message}}" }
  - text: "Saved."
`;

const DELEGATE = `steps:
  - tool_calls:
      - tool: agents/helper2
        args: { message: "{{message}}" }
  - text: "Got {{result}}"
`;

let receiver: OtlpReceiver;
beforeAll(async () => {
  receiver = await startOtlpReceiver();
});
afterAll(async () => {
  await receiver.close();
});

/** The daemon's environment for exporting to the receiver, quickly (a short batch delay). */
function otelEnv(extra: Record<string, string> = {}): Record<string, string> {
  return { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: "50", OTEL_SERVICE_NAME: "wardrik-under-test", ...extra };
}

function startTracedWorker(p: TestProject): { child: ChildProcess; output: () => string } {
  const file = fileURLToPath(new URL("./fixtures/traced-worker.ts", import.meta.url));
  return startFixtureWorker(p, file, { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url });
}

const ofTrace = (traceId: string) => (s: ReceivedSpan) => s.traceId === traceId;
const named = (spans: ReceivedSpan[], name: string) => spans.filter((s) => s.name === name);

/** The JSON log lines of the daemon. */
function logLines(p: TestProject): Record<string, unknown>[] {
  return p
    .daemonStderr()
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

describe("traces of a turn", () => {
  // The daemon of the first and the last test (http/protobuf, debug logs): each looks only at its own agents' spans and lines.
  let p: TestProject;
  beforeAll(async () => {
    p = await createProject({
      scripts: {
        lookup: LOOKUP,
        delegate: DELEGATE,
        facts: "steps:\n  - text: facts\n",
        to_asker: DELEGATE.replace("helper2", "asker"),
        asking: "steps:\n  - tool_calls:\n      - tool: person/ask\n        args: { question: ok? }\n  - text: asked\n",
      },
      files: {
        "agents/orders.md": agentFile({ description: "Looks up orders.", model: "lookup", tools: ["workers/*"] }),
        "policies/open.yaml": 'description: Everything.\nrules:\n  - tool: "*"\n    decision: allow\n',
        "agents/boss.md": agentFile({ description: "Delegates.", model: "delegate", agents: ["helper2"], policy: "open" }),
        "agents/helper2.md": agentFile({ description: "Knows facts.", model: "facts", policy: "open" }),
        "agents/boss_of_asker.md": agentFile({ description: "Delegates.", model: "to_asker", agents: ["asker"], policy: "open" }),
        "agents/asker.md": agentFile({ description: "Asks.", model: "asking", tools: ["person"], policy: "open" }),
      },
      env: otelEnv({ WARDRIK_LOG_LEVEL: "debug" }),
    });
  });

  it("one trace per turn: invoke_agent, chat and execute_tool spans after the GenAI conventions, and the worker's own span under the call (http/protobuf)", async () => {
    const worker = startTracedWorker(p);
    const agentId = await p.agentId("orders");
    await waitFor(
      async () =>
        ((await p.apiOk<{ tool_sources?: { reason?: string }[] }>("GET", `/v1/agents/${agentId}`)).tool_sources ?? []).some((s) =>
          (s.reason ?? "").includes("find_order"),
        ),
      `the worker to register; its output: ${worker.output()}`,
    );
    const { run, end } = await p.send("orders", "ord_7");
    expect(short(end.type), JSON.stringify(end.data)).toBe("turn.completed");
    const events = await p.events("orders");
    const callId = events.find((e) => short(e.type) === "call.started" && e.run === run)!.data.call as string;
    const conversationId = end.data.conversation_id as string;

    const spans = await receiver.waitForSpans(
      (all) =>
        all.some((s) => s.name === "invoke_agent orders" && s.attributes["wardrik.turn.id"] === run) &&
        all.some((s) => s.name === "lookup ord_7"),
      "the turn's root span and the worker's span",
    );
    const root = spans.find((s) => s.name === "invoke_agent orders" && s.attributes["wardrik.turn.id"] === run)!;
    const trace = spans.filter(ofTrace(root.traceId));

    // The root: the whole turn, after the invoke_agent conventions.
    expect(root.parentSpanId).toBeUndefined();
    expect(root.kind).toBe(1);
    expect(root.encoding).toBe("protobuf");
    expect(root.resource["service.name"]).toBe("wardrik-under-test");
    expect(root.attributes).toMatchObject({
      "gen_ai.operation.name": "invoke_agent",
      "gen_ai.agent.id": agentId,
      "gen_ai.agent.name": "orders",
      "gen_ai.agent.description": "Looks up orders.",
      "gen_ai.conversation.id": conversationId,
      "gen_ai.provider.name": "wardrik.script",
      "wardrik.turn.outcome": "completed",
      "wardrik.turn.iterations": 2,
    });

    // Two model calls, children of the turn.
    const chats = named(trace, "chat lookup");
    expect(chats).toHaveLength(2);
    for (const chat of chats) {
      expect(chat.parentSpanId).toBe(root.spanId);
      expect(chat.kind).toBe(3);
      expect(chat.attributes).toMatchObject({
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "wardrik.script",
        "gen_ai.request.model": "lookup",
        "gen_ai.agent.id": agentId,
        "gen_ai.conversation.id": conversationId,
      });
      expect(chat.attributes["gen_ai.usage.input_tokens"]).toBeGreaterThan(0);
      expect(chat.attributes["gen_ai.usage.output_tokens"]).toBeGreaterThan(0);
      // Message content only when asked for.
      expect(chat.attributes["gen_ai.input.messages"]).toBeUndefined();
      expect(chat.startMs).toBeGreaterThanOrEqual(root.startMs);
      expect(chat.endMs).toBeLessThanOrEqual(root.endMs);
    }
    expect(chats.map((c) => c.attributes["gen_ai.response.finish_reasons"]).sort()).toEqual([["stop"], ["tool-calls"]]);

    // The tool call, with its policy decision and outcome.
    const [tool] = named(trace, "execute_tool workers/find_order");
    expect(tool).toBeDefined();
    expect(tool!.parentSpanId).toBe(root.spanId);
    expect(tool!.attributes).toMatchObject({
      "gen_ai.operation.name": "execute_tool",
      "gen_ai.tool.name": "workers/find_order",
      "gen_ai.tool.call.id": callId,
      "gen_ai.tool.description": "Find an order by ID.",
      "wardrik.call.decision": "allow",
      "wardrik.call.outcome": "completed",
    });
    expect(tool!.status.code).toBe(0);

    // Across the process boundary: the worker got the call's traceparent, and its span is the call's child.
    const lookup = spans.find((s) => s.name === "lookup ord_7")!;
    expect(lookup.resource["service.name"]).toBe("order-worker");
    expect(lookup.encoding).toBe("json");
    expect(lookup.traceId).toBe(root.traceId);
    expect(lookup.parentSpanId).toBe(tool!.spanId);
    expect(worker.output()).toContain(`"traceparent":"00-${root.traceId}-${tool!.spanId}-01"`);

    // Log lines inside the turn name the span they were written in.
    const lines = logLines(p);
    const modelLines = lines.filter((l) => l.msg === "model call ended" && l.run === run);
    expect(modelLines).toHaveLength(2);
    for (const l of modelLines) {
      expect(l.trace_id).toBe(root.traceId);
      expect(chats.map((c) => c.spanId)).toContain(l.span_id);
    }
    const toolLine = lines.find((l) => l.msg === "tool call ended" && l.run === run)!;
    expect(toolLine).toMatchObject({ trace_id: root.traceId, span_id: tool!.spanId, call: callId, outcome: "completed" });
    // Every line about the turn names its trace (the root span unless the line is about a span of its own).
    const aboutTurn = lines.filter((l) => l.run === run);
    expect(aboutTurn.length).toBeGreaterThanOrEqual(3);
    for (const l of aboutTurn) {
      expect(l.trace_id).toBe(root.traceId);
      expect([root.spanId, tool!.spanId, ...chats.map((c) => c.spanId)]).toContain(l.span_id);
    }
    // Outside a turn, no trace fields.
    expect(lines.find((l) => String(l.msg).startsWith("wardrik daemon listening"))?.trace_id).toBeUndefined();
  });

  it("a turn parked for approval and resumed after a crash stays one trace: the later stretch's spans are children of the same root (http/json, content captured)", async () => {
    const p = await createProject({
      scripts: { note: WRITE_NOTE },
      files: {
        "agents/notes.md": agentFile({ description: "Keeps notes.", model: "note", tools: ["files"], policy: "careful" }),
        "policies/careful.yaml": "description: Ask before writing.\nrules:\n  - tool: files/write\n    decision: ask\n",
      },
      env: otelEnv({ OTEL_EXPORTER_OTLP_PROTOCOL: "http/json", OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT: "true" }),
    });
    const agentId = await p.agentId("notes");
    const queued = await p.apiOk<{ message: string }>("POST", `/v1/agents/${agentId}/messages`, { text: "buy milk" });
    const asked = await p.waitForEvent("notes", (e) => short(e.type) === "approval.requested");
    const run = asked.run!;
    const callId = asked.data.call as string;

    // Before the crash: the first model call and the call that waits for a person.
    const before = await receiver.waitForSpans(
      (all) => all.some((s) => s.name === "execute_tool files/write" && s.attributes["gen_ai.tool.call.id"] === callId),
      "the waiting call's span",
    );
    const waiting = before.find((s) => s.name === "execute_tool files/write" && s.attributes["gen_ai.tool.call.id"] === callId)!;
    expect(waiting.encoding).toBe("json");
    expect(waiting.attributes).toMatchObject({ "wardrik.call.decision": "ask", "wardrik.call.outcome": "approval_requested" });
    const firstChat = before.find((s) => s.name === "chat note" && s.traceId === waiting.traceId)!;
    expect(firstChat.parentSpanId).toBe(waiting.parentSpanId);
    // Content was asked for: the prompt and the reply are on the span.
    expect(String(firstChat.attributes["gen_ai.input.messages"])).toContain("buy milk");
    expect(JSON.parse(String(firstChat.attributes["gen_ai.output.messages"]))).toMatchObject([
      { role: "assistant", finish_reason: "tool-calls", parts: [{ type: "tool_call", name: "files__write" }] },
    ]);
    expect(JSON.parse(String(firstChat.attributes["gen_ai.system_instructions"]))).toEqual([
      { type: "text", content: "You are a test agent." },
    ]);

    await p.kill();
    await p.start();
    expect((await p.api("POST", `/v1/agents/${agentId}/calls/${callId}/approve`)).status).toBe(200);
    const end = await p.waitForTurnEnd("notes", run);
    expect(short(end.type)).toBe("turn.completed");
    expect(queued.message).toMatch(/^msg_/);

    const spans = await receiver.waitForSpans(
      (all) => all.some((s) => s.name === "invoke_agent notes" && s.attributes["wardrik.turn.id"] === run),
      "the resumed turn's root span",
    );
    const root = spans.find((s) => s.name === "invoke_agent notes" && s.attributes["wardrik.turn.id"] === run)!;
    // Exported by the restarted daemon, with the IDs the first one chose at the turn's start.
    expect(root.traceId).toBe(waiting.traceId);
    expect(root.spanId).toBe(waiting.parentSpanId);
    expect(root.startMs).toBeLessThanOrEqual(firstChat.startMs);
    const trace = spans.filter(ofTrace(root.traceId));
    const ran = named(trace, "execute_tool files/write").find((s) => s.attributes["wardrik.call.outcome"] === "completed")!;
    expect(ran).toBeDefined();
    expect(ran.parentSpanId).toBe(root.spanId);
    expect(ran.startMs).toBeGreaterThan(waiting.endMs);
    expect(ran.attributes).toMatchObject({ "gen_ai.tool.call.id": callId, "wardrik.call.decision": "ask" });
    expect(JSON.parse(String(ran.attributes["gen_ai.tool.call.arguments"]))).toEqual({ path: "notes/today.md", content: "buy milk" });
    const chats = named(trace, "chat note");
    expect(chats).toHaveLength(2);
    expect(chats.every((c) => c.parentSpanId === root.spanId)).toBe(true);
  });

  it("a sub-agent's turn is in its parent's trace: its invoke_agent span is a child of the parent's execute_tool agents/NAME span", async () => {
    const { run, end } = await p.send("boss", "x");
    expect(short(end.type)).toBe("turn.completed");
    const spans = await receiver.waitForSpans(
      (all) =>
        all.some((s) => s.name === "invoke_agent boss" && s.attributes["wardrik.turn.id"] === run) &&
        all.some((s) => s.name === "invoke_agent helper2"),
      "both turns' root spans",
    );
    const root = spans.find((s) => s.name === "invoke_agent boss" && s.attributes["wardrik.turn.id"] === run)!;
    const trace = spans.filter(ofTrace(root.traceId));
    const call = named(trace, "execute_tool agents/helper2")[0]!;
    expect(call.parentSpanId).toBe(root.spanId);
    const child = named(trace, "invoke_agent helper2")[0]!;
    expect(child.parentSpanId).toBe(call.spanId);
    expect(named(trace, "chat facts")[0]!.parentSpanId).toBe(child.spanId);

    // A child turn carried across a kill -9 stays in its caller's trace, its root span under the call's first attempt's
    // span: the restarted daemon reads the call's trace context from the message the call sent.
    const asking = await p.agentId("boss_of_asker");
    await p.apiOk("POST", `/v1/agents/${asking}/messages`, { text: "y" });
    const asked = await p.waitForEvent("asker", (e) => short(e.type) === "question.asked");
    await p.waitForEvent("asker", (e) => short(e.type) === "turn.parked");
    const callerRun = (await p.waitForEvent(asking, (e) => short(e.type) === "call.started")).run!;
    await p.kill();
    await p.start();
    const answered = await p.api("POST", `/v1/agents/${await p.agentId("asker")}/calls/${String(asked.data.call)}/answer`, {
      answer: "yes",
    });
    expect(answered.status, answered.text).toBe(200);
    expect(short((await p.waitForTurnEnd(asking, callerRun)).type)).toBe("turn.completed");
    const after = await receiver.waitForSpans(
      (all) =>
        all.some((s) => s.name === "invoke_agent boss_of_asker" && s.attributes["wardrik.turn.id"] === callerRun) &&
        all.some((s) => s.name === "invoke_agent asker" && s.attributes["wardrik.turn.id"] === asked.run),
      "the caller's and the resumed child's root spans",
    );
    const callerRoot = after.find((s) => s.name === "invoke_agent boss_of_asker" && s.attributes["wardrik.turn.id"] === callerRun)!;
    const childRoot = after.find((s) => s.name === "invoke_agent asker" && s.attributes["wardrik.turn.id"] === asked.run)!;
    expect(childRoot.traceId).toBe(callerRoot.traceId);
    // Its parent is the call's first attempt's span, which the crash cut short (never exported); the second attempt's is
    // the caller root's child, as every call's is.
    expect(childRoot.parentSpanId).toMatch(/^[0-9a-f]{16}$/);
    expect(childRoot.parentSpanId).not.toBe(callerRoot.spanId);
    const calls = named(after.filter(ofTrace(callerRoot.traceId)), "execute_tool agents/asker");
    expect(calls.length).toBeGreaterThan(0);
    expect(calls.every((c) => c.parentSpanId === callerRoot.spanId)).toBe(true);
    expect(named(after.filter(ofTrace(callerRoot.traceId)), "chat asking").every((c) => c.parentSpanId === childRoot.spanId)).toBe(true);
  });
});
