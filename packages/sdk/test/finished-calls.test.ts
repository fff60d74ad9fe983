import { expect, test } from "vitest";
import { MemoryFinishedCalls, type FinishedCallRecord } from "../src/finished-calls.js";

function calls(maxCalls: number, maxAgeMs: number, maxChars: number) {
  let now = 0;
  const f = new MemoryFinishedCalls({ maxCalls, maxAgeMs, maxChars }, () => now);
  return { f, advance: (ms: number) => (now += ms), at: () => now };
}

const record = (key: string, result: string, at = 0): FinishedCallRecord => ({ key, callId: key, attempt: 1, at, result });
const resultOf = (r: FinishedCallRecord | undefined) => r?.result;

test("remembers results by idempotency key, within the count bound", () => {
  const { f } = calls(2, 60_000, 1000);
  f.put(record("a", "A"));
  f.put(record("b", "B"));
  f.put(record("c", "C"));
  expect([f.get("a"), f.get("b"), f.get("c")].map(resultOf)).toEqual([undefined, "B", "C"]);
});

test("forgets results older than the age bound and past the size bound", () => {
  const { f, advance, at } = calls(100, 1000, 10);
  f.put(record("old", "x", at()));
  advance(1500);
  expect(f.get("old")).toBeUndefined();
  f.put(record("a", "12345", at()));
  f.put(record("b", "123456", at()));
  expect(f.get("a")).toBeUndefined();
  expect(resultOf(f.get("b"))).toBe("123456");
});

test("a key remembered again keeps its newer result when the older entry ages out", () => {
  const { f } = calls(2, 60_000, 1000);
  f.put(record("a", "first"));
  f.put(record("a", "second"));
  f.put(record("b", "B"));
  expect(resultOf(f.get("a"))).toBe("second");
  expect(f.records().map((r) => r.result)).toEqual(["second", "B"]);
});
