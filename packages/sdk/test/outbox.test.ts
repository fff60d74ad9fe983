import { expect, test } from "vitest";
import { Outbox } from "../src/outbox.js";

function outbox(limits: ConstructorParameters<typeof Outbox>[0]) {
  let now = 1_000_000;
  const warnings: string[] = [];
  const box = new Outbox(
    limits,
    (m) => warnings.push(m),
    () => now,
  );
  return { box, warnings, advance: (ms: number) => (now += ms) };
}

const msg = (callId: string, frame = `{"type":"result","callId":"${callId}"}`) => ({ callId, frame });

test("keeps messages in order and empties on take", () => {
  const { box, warnings } = outbox({});
  box.hold(msg("call_1"));
  box.hold(msg("call_2"));
  expect(box.size).toBe(2);
  expect(box.take().map((m) => m.callId)).toEqual(["call_1", "call_2"]);
  expect(box.size).toBe(0);
  expect(warnings).toEqual([]);
});

test("past the count bound the oldest go, with a warning naming them", () => {
  const { box, warnings } = outbox({ maxMessages: 2 });
  for (const id of ["call_1", "call_2", "call_3"]) box.hold(msg(id));
  expect(box.take().map((m) => m.callId)).toEqual(["call_2", "call_3"]);
  expect(warnings).toEqual([
    "Wardrik: dropped 1 unsent message(s) of call(s) call_1: the worker keeps at most 2 messages (67108864 characters) while disconnected.",
  ]);
});

test("past the size bound the oldest go", () => {
  const { box, warnings } = outbox({ maxChars: 100 });
  box.hold(msg("call_1", "x".repeat(60)));
  box.hold(msg("call_2", "y".repeat(60)));
  expect(box.take().map((m) => m.callId)).toEqual(["call_2"]);
  expect(warnings[0]).toContain("call_1");
});

test("messages older than the age bound are dropped", () => {
  const { box, warnings, advance } = outbox({ maxAgeMs: 60_000 });
  box.hold(msg("call_old"));
  advance(30_000);
  box.hold(msg("call_new"));
  advance(40_000);
  expect(box.take().map((m) => m.callId)).toEqual(["call_new"]);
  expect(warnings).toEqual(["Wardrik: dropped 1 unsent message(s) of call(s) call_old: they waited more than 60 s for a connection."]);
});

test("messages a connection could not write go back in front, so a call's cost still precedes its result", () => {
  const { box } = outbox({});
  box.hold(msg("call_2"));
  box.restore([msg("call_1", "cost"), msg("call_1", "result")]);
  expect(box.take().map((m) => m.frame)).toEqual(["cost", "result", '{"type":"result","callId":"call_2"}']);
});
