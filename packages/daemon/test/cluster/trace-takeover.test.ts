/**
 * A turn's trace survives its node: the node that drives a turn is killed
 * (SIGKILL) mid-turn, another node takes the agent over and finishes the
 * turn, and the spans it writes after the takeover are children of the same
 * root span, in the same trace, as the spans the dead node exported before it
 * died. Both nodes export to one real OTLP/HTTP receiver in this process.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from "../helpers/otlp-receiver.js";
import { agentMarkdown } from "../faults/fault-agent.js";
import { api, eventsOf, short, waitUntil, type FaultEvent } from "../faults/fault-api.js";
import { settle } from "../faults/fault-settle.js";
import type { FaultWorker } from "../faults/fault-worker-process.js";
import { startCluster, waitForClusterWorker, type Cluster, type ClusterNode } from "./cluster-kit.js";

let receiver: OtlpReceiver;
let c: Cluster;
let w: FaultWorker;
beforeAll(async () => {
  receiver = await startOtlpReceiver();
  c = await startCluster({
    count: 2,
    agents: ["inflight"],
    byPrefix: {
      // Calls that run long enough to kill their node while they run.
      inflight: { toolMs: { lookup: 1500, upsert: 1500 } },
      asked: { toolMs: { lookup: 50, charge: 50 } },
    },
    files: {
      // An agent whose policy asks a person before `charge`: its turn parks until someone answers.
      "agents/asker.md": agentMarkdown({ policy: "ask-charge" }),
      "policies/ask-charge.yaml":
        "description: A person approves charges.\nrules:\n  - tool: workers/charge\n    decision: ask\n  - tool: workers/*\n    decision: allow\n",
    },
    // A short batch delay, so a span is at the receiver soon after it ends (before the kill).
    env: { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_BSP_SCHEDULE_DELAY: "50", OTEL_SERVICE_NAME: "wardrik-cluster" },
  });
  // The worker is connected to n2 only: what runs in it outlives n1.
  w = c.worker(c.nodes[1]!.url);
  await waitForClusterWorker(c, c.nodes[1]!, w);
});
afterAll(async () => {
  await receiver?.close();
});

const node = (s: ReceivedSpan) => s.resource["wardrik.node"];
const ofRun = (run: string) => (s: ReceivedSpan) => s.name.startsWith("invoke_agent ") && s.attributes["wardrik.turn.id"] === run;

async function send(via: ClusterNode, agentId: string, text: string): Promise<string> {
  return (await api<{ message: string }>(via, "POST", `/v1/agents/${agentId}/messages`, { text, conversation: "main" })).message;
}

function runOf(events: FaultEvent[], message: string): string | undefined {
  return events.find((e) => short(e.type) === "turn.started" && (e.data.messages as string[]).includes(message))?.run;
}

/** The spans of one trace that a node exported. */
function exportedBy(spans: ReceivedSpan[], traceId: string, name: string): ReceivedSpan[] {
  return spans.filter((s) => s.traceId === traceId && node(s) === name);
}

describe("a turn's trace across a takeover", () => {
  it("n1 dies while the turn's calls run in a worker: n2 finishes the turn, and its spans (the second model call, the root) are in the trace n1 started, under the same root", async () => {
    const agentId = await c.idOf("inflight");
    const [n1, n2] = c.nodes as [ClusterNode, ClusterNode];
    const m = await send(n1, agentId, "inflight-1");
    const run = await waitUntil(async () => runOf(await eventsOf(n1, agentId), m), "the turn to start");
    expect(await c.ownerOf(agentId)).toBe("n1");
    await waitUntil(
      () => w.log().filter((l) => l.tag.startsWith("inflight-1/") && l.phase === "start").length === 2,
      "both calls to run in the worker",
    );
    // Before the kill: n1 exported the turn's first model call.
    const isFirstChat = (s: ReceivedSpan) => s.name === "chat faulty" && s.attributes["gen_ai.agent.id"] === agentId;
    const before = await receiver.waitForSpans((all) => all.some(isFirstChat), "n1's first model call");
    const firstChat = before.find(isFirstChat)!;
    expect(node(firstChat)).toBe("n1");
    expect(firstChat.parentSpanId).toBeDefined();
    expect(before.some(ofRun(run))).toBe(false);

    const killedAt = Date.now();
    await n1.kill();
    const r = await settle(n2, agentId, [m], 30_000);
    expect(short(r.events.filter((e) => e.run === run).at(-1)!.type)).toBe("turn.completed");
    expect(await c.ownerOf(agentId, n2)).toBe("n2");

    const spans = await receiver.waitForSpans((all) => all.some(ofRun(run)), "the turn's root span");
    const root = spans.find(ofRun(run))!;
    // The root: exported by n2 when the turn ended there, with the IDs n1 chose and stored when the turn started.
    expect(node(root)).toBe("n2");
    expect(root.traceId).toBe(firstChat.traceId);
    expect(root.spanId).toBe(firstChat.parentSpanId);
    expect(root.parentSpanId).toBeUndefined();
    expect(root.startMs).toBeLessThanOrEqual(firstChat.startMs);
    expect(root.endMs).toBeGreaterThan(killedAt);
    expect(root.attributes).toMatchObject({
      "gen_ai.agent.id": agentId,
      "wardrik.turn.outcome": "completed",
      "wardrik.turn.iterations": 2,
    });
    // What n2 did after the takeover (the second model call; a call re-run, if the lease ran out first): children of the same root.
    const after = exportedBy(spans, root.traceId, "n2").filter((s) => s !== root);
    expect(after.map((s) => s.name)).toContain("chat faulty");
    for (const s of after) {
      expect(s.parentSpanId, s.name).toBe(root.spanId);
      expect(s.startMs, s.name).toBeGreaterThan(killedAt);
    }
    expect(after.find((s) => s.name === "chat faulty")!.attributes["gen_ai.response.finish_reasons"]).toEqual(["stop"]);
    await n1.start();
  });

  it("n1 dies while the turn waits for a person: the approval reaches n2, which takes the agent over and runs the call; the call, the model call and the root are in the trace n1 started", async () => {
    const agentId = await c.idOf("asker");
    const [n1, n2] = c.nodes as [ClusterNode, ClusterNode];
    const m = await send(n1, agentId, "asked-1");
    const asked = await waitUntil(
      async () => (await eventsOf(n1, agentId)).find((e) => short(e.type) === "approval.requested"),
      "the charge to wait for a person",
    );
    const run = asked.run!;
    const callId = asked.data.call as string;
    // The round's other call (lookup, allowed) is done: only the charge is left, waiting.
    await waitUntil(
      async () => (await eventsOf(n1, agentId)).some((e) => short(e.type) === "call.completed" && e.run === run),
      "the allowed call to complete",
    );
    expect(await c.ownerOf(agentId)).toBe("n1");
    // n1 exported the waiting call's span before it died.
    const before = await receiver.waitForSpans(
      (all) => all.some((s) => s.name === "execute_tool workers/charge" && s.attributes["gen_ai.tool.call.id"] === callId),
      "the waiting call's span",
    );
    const waiting = before.find((s) => s.name === "execute_tool workers/charge" && s.attributes["gen_ai.tool.call.id"] === callId)!;
    expect(node(waiting)).toBe("n1");
    expect(waiting.attributes["wardrik.call.outcome"]).toBe("approval_requested");

    const killedAt = Date.now();
    await n1.kill();
    expect((await fetch(`${n2.url}/v1/agents/${agentId}/calls/${callId}/approve`, auth("POST"))).status).toBe(200);
    const r = await settle(n2, agentId, [m], 30_000);
    expect(short(r.events.filter((e) => e.run === run).at(-1)!.type)).toBe("turn.completed");

    const spans = await receiver.waitForSpans((all) => all.some(ofRun(run)), "the turn's root span");
    const root = spans.find(ofRun(run))!;
    expect(node(root)).toBe("n2");
    expect(root.traceId).toBe(waiting.traceId);
    expect(root.spanId).toBe(waiting.parentSpanId);
    const after = exportedBy(spans, root.traceId, "n2").filter((s) => s !== root);
    expect(after.map((s) => s.name).sort()).toEqual(["chat faulty", "execute_tool workers/charge"]);
    for (const s of after) {
      expect(s.parentSpanId, s.name).toBe(root.spanId);
      expect(s.startMs, s.name).toBeGreaterThan(killedAt);
    }
    const ran = after.find((s) => s.name === "execute_tool workers/charge")!;
    expect(ran.attributes).toMatchObject({
      "gen_ai.tool.call.id": callId,
      "wardrik.call.decision": "ask",
      "wardrik.call.outcome": "completed",
    });
    await n1.start();
  });
});

function auth(method: string): RequestInit {
  return { method, headers: { authorization: `Bearer ${c.p.token}` } };
}
