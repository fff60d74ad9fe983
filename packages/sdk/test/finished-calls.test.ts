import { expect, test } from "vitest";
import { FinishedCalls } from "../src/finished-calls.js";

function calls(maxCalls: number, maxAgeMs: number, maxChars: number) {
  let now = 0;
  const f = new FinishedCalls(maxCalls, maxAgeMs, maxChars, () => now);
  return { f, advance: (ms: number) => (now += ms) };
}

test("remembers results by call, within the count bound", () => {
  const { f } = calls(2, 60_000, 1000);
  f.remember("a", "A");
  f.remember("b", "B");
  f.remember("c", "C");
  expect([f.recall("a"), f.recall("b"), f.recall("c")]).toEqual([undefined, "B", "C"]);
});

test("forgets results older than the age bound and past the size bound", () => {
  const { f, advance } = calls(100, 1000, 10);
  f.remember("old", "x");
  advance(1500);
  expect(f.recall("old")).toBeUndefined();
  f.remember("a", "12345");
  f.remember("b", "123456");
  expect(f.recall("a")).toBeUndefined();
  expect(f.recall("b")).toBe("123456");
});

test("a call remembered again keeps its newer result when the older entry ages out", () => {
  const { f } = calls(2, 60_000, 1000);
  f.remember("a", "first");
  f.remember("a", "second");
  f.remember("b", "B");
  expect(f.recall("a")).toBe("second");
});
