import { describe, expect, it } from "vitest";
import type { StoredEvent } from "../../src/events/event-bus.js";
import { keepDataJson } from "../../src/events/event-json.js";
import { toCloudEvent } from "../../src/http/agent-summary.js";
import { agentEventFrame, feedEventFrame, joinFrames } from "../../src/http/sse-frames.js";

function event(data: Record<string, unknown>, extra: Partial<StoredEvent> = {}): StoredEvent {
  return {
    specversion: "1.0",
    id: "evt_1",
    source: "/orgs/default/agents/agt_1",
    type: "dev.wardrik.turn.completed",
    time: "2026-12-01T00:00:00.000Z",
    datacontenttype: "application/json",
    seq: 7,
    run: "run_1",
    data,
    agent: "agt_1",
    org: "default",
    ...extra,
  };
}

function parse(frame: Uint8Array): { event: string; id: string; data: unknown } {
  const text = Buffer.from(frame).toString();
  expect(text.endsWith("\n\n")).toBe(true);
  const lines = text.trimEnd().split("\n");
  const field = (name: string) => lines.find((l) => l.startsWith(`${name}: `))!.slice(name.length + 2);
  return { event: field("event"), id: field("id"), data: JSON.parse(field("data")) };
}

describe("SSE frames", () => {
  it("carry the CloudEvent without the daemon's own fields, data included as stored", () => {
    const data = { reply: "line one\nline two \u2028 done", n: 1, nested: { ok: true } };
    const e = event(data);
    keepDataJson(e, JSON.stringify(data));
    expect(parse(agentEventFrame(e))).toEqual({ event: "event", id: "7", data: toCloudEvent(e) });
    // Built once: a second follower gets the very same bytes.
    expect(agentEventFrame(e)).toBe(agentEventFrame(e));
  });

  it("serialise the data when no stored JSON is known, and the feed's frame adds the cursor as id", () => {
    const e = { ...event({ a: [1, 2] }, { subject: "call_1" }), cursor: "42" };
    const { cursor: _cursor, ...stored } = e;
    expect(parse(feedEventFrame(e))).toEqual({ event: "event", id: "42", data: { ...toCloudEvent(stored), cursor: "42" } });
  });

  it("join a batch into one chunk", () => {
    const a = agentEventFrame(event({ x: 1 }, { seq: 1 }));
    const b = agentEventFrame(event({ x: 2 }, { seq: 2 }));
    expect(Buffer.from(joinFrames([a, b])).toString()).toBe(Buffer.from(a).toString() + Buffer.from(b).toString());
  });
});
