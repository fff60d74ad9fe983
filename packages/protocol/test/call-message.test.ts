/**
 * The SDK reads calls with a hand check (isCallMessage) instead of the
 * DaemonCall schema: both must accept and refuse the same messages.
 */
import { describe, expect, it } from "vitest";
import { DaemonCall, isCallMessage } from "../src/index.js";

const ctx = { agent: "agt_1", run: "run_1", idempotencyKey: "key_1", timeoutMs: 30_000 };
const call = { type: "call", callId: "call_1", attempt: 1, tool: "ping", args: { n: 1 }, ctx };

const cases: [string, unknown][] = [
  ["a call", call],
  ["a call with trace context", { ...call, ctx: { ...ctx, traceparent: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01" } }],
  ["a call without args", { type: "call", callId: "c", attempt: 2, tool: "t", ctx }],
  ["a call whose args are null", { ...call, args: null }],
  ["a call with a zero timeout and extra fields", { ...call, extra: 1, ctx: { ...ctx, timeoutMs: 0, more: true } }],
  ["another type", { ...call, type: "abort" }],
  ["an empty callId", { ...call, callId: "" }],
  ["a callId over 200 characters", { ...call, callId: "c".repeat(201) }],
  ["attempt 0", { ...call, attempt: 0 }],
  ["a fractional attempt", { ...call, attempt: 1.5 }],
  ["attempt as a string", { ...call, attempt: "1" }],
  ["no tool", { ...call, tool: undefined }],
  ["no ctx", { ...call, ctx: undefined }],
  ["ctx as an array", { ...call, ctx: [] }],
  ["ctx without a run", { ...call, ctx: { ...ctx, run: undefined } }],
  ["a negative timeout", { ...call, ctx: { ...ctx, timeoutMs: -1 } }],
  ["a fractional timeout", { ...call, ctx: { ...ctx, timeoutMs: 1.5 } }],
  ["a traceparent over 512 characters", { ...call, ctx: { ...ctx, traceparent: "0".repeat(513) } }],
  ["a traceparent that is a number", { ...call, ctx: { ...ctx, traceparent: 1 } }],
  ["null", null],
  ["an array", [call]],
];

describe("isCallMessage", () => {
  it.each(cases)("agrees with the DaemonCall schema on %s", (_name, item) => {
    expect(isCallMessage(item)).toBe(DaemonCall.safeParse(item).success);
  });

  it("accepts the messages the schema accepts, and only those, among the cases", () => {
    expect(cases.filter(([, item]) => isCallMessage(item)).map(([name]) => name)).toEqual([
      "a call",
      "a call with trace context",
      "a call whose args are null",
      "a call with a zero timeout and extra fields",
    ]);
  });
});
