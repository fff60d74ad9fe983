import { expect, test } from "vitest";
import { CallStopper, stopWatchOf, withStopSignal } from "../../src/tools/call-stopper.js";
import { CallStop } from "../../src/tools/toolset.js";

// A call's stop without an AbortSignal until one is asked for (Node 20 makes each signal slowly).

test("a stopper tells each listener once, keeps its first reason, and forgets a listener that left", async () => {
  const stop = new CallStopper();
  const heard: string[] = [];
  stop.onStop(() => heard.push("a"));
  const leave = stop.onStop(() => heard.push("b"));
  leave();
  expect(stop.reason).toBeUndefined();
  stop.abort(new CallStop("timeout"));
  stop.abort(new CallStop("killed"));
  expect(stop.reason?.why).toBe("timeout");
  expect(heard).toEqual(["a"]);
  // A listener that comes after the stop hears it too, soon.
  await new Promise<void>((resolve) => stop.onStop(resolve));
});

test("a signal read before the stop aborts with its reason; one read after is made aborted", () => {
  const before = new CallStopper();
  const signal = before.signal;
  expect(signal.aborted).toBe(false);
  before.abort(new CallStop("cancelled"));
  expect(signal.aborted).toBe(true);
  expect((signal.reason as CallStop).why).toBe("cancelled");

  const after = new CallStopper();
  after.abort(new CallStop("killed"));
  expect(after.signal.aborted).toBe(true);
  expect((after.signal.reason as CallStop).why).toBe("killed");
});

test("a caller that gave only a signal is watched through it, any other reason counting as a kill", async () => {
  const controller = new AbortController();
  const watch = stopWatchOf({ signal: controller.signal });
  let heard = 0;
  watch.onStop(() => (heard += 1));
  expect(watch.reason).toBeUndefined();
  controller.abort(new Error("something else"));
  expect(heard).toBe(1);
  expect(watch.reason?.why).toBe("killed");
  await new Promise<void>((resolve) => watch.onStop(resolve));
});

test("a context made with withStopSignal has its stop's signal as an own property, made only when read", () => {
  const stop = new CallStopper();
  const ctx = withStopSignal({ callId: "call_1", stop });
  const other = withStopSignal({ callId: "call_2", stop: new CallStopper() });
  // A spread copy (or Object.keys) sees it like any other field; reading it makes the stop's signal.
  expect(Object.keys(ctx)).toEqual(["callId", "stop", "signal"]);
  const copy = { ...ctx };
  expect(copy.signal).toBe(stop.signal);
  expect(ctx.signal).toBe(stop.signal);
  stop.abort(new CallStop("timeout"));
  expect(ctx.signal.aborted).toBe(true);
  expect((ctx.signal.reason as CallStop).why).toBe("timeout");
  // Each context reads its own stop.
  expect(other.signal.aborted).toBe(false);
});
