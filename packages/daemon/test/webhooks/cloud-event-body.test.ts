/**
 * A delivery's body is written from the event's stored row without parsing
 * its data: it must be exactly what the event feeds serve for that event (the
 * CloudEvent of `toEvent`, without `agent` and `org`), optional members and
 * awkward characters included.
 */
import { describe, expect, it } from "vitest";
import { cloudEventJson } from "../../src/events/event-json.js";
import { toEvent, type EventRow } from "../../src/store/events.js";
import { cloudEventBody } from "../../src/webhooks/cloud-event-body.js";

const row = (over: Partial<EventRow> = {}): EventRow => ({
  agent_id: "agt_01JF8X5RQ2M3V9ZK0B7Y4T6WHN",
  org: "default",
  seq: 42,
  id: "evt_01JF8X5RQ2M3V9ZK0B7Y4T6WHP",
  type: "dev.wardrik.turn.completed",
  time: "2026-12-01T10:00:00.000Z",
  subject: null,
  run: null,
  data: JSON.stringify({ reply: 'He said "hi"\n\u2028 é', usage: { input: 3, output: 4 }, list: [1, null, true] }),
  ...over,
});

describe("cloudEventBody", () => {
  it("is the event feeds' CloudEvent, byte for byte, with and without subject and run", () => {
    for (const r of [row(), row({ subject: "conversations/support", run: "run_01JF8X5RQ2M3V9ZK0B7Y4T6WHQ" }), row({ data: "{}" })]) {
      const body = cloudEventBody(r);
      expect(body).toBe(cloudEventJson(toEvent(r)));
      expect(JSON.parse(body)).not.toHaveProperty("agent");
    }
  });
});
