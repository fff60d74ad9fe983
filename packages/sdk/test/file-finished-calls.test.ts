/**
 * The file-backed finished-calls store: what one process remembered, the next
 * one reads; a torn last line (a crash mid-write) is skipped; the file is
 * rewritten with the live calls once it holds twice as many lines as kept.
 */
import { appendFileSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, expect, test } from "vitest";
import { FileFinishedCalls, type FinishedCallRecord } from "../src/index.js";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function fileIn(): string {
  const dir = mkdtempSync(join(tmpdir(), "wardrik-finished-"));
  dirs.push(dir);
  return join(dir, "nested", "finished.jsonl");
}

const record = (key: string, at = Date.now()): FinishedCallRecord => ({
  key,
  callId: key,
  attempt: 2,
  at,
  result: JSON.stringify({ ok: true, output: { key } }),
});

const lines = (file: string) =>
  readFileSync(file, "utf8")
    .split("\n")
    .filter((l) => l !== "");

test("a second store over the same file knows what the first remembered", async () => {
  const file = fileIn();
  const first = new FileFinishedCalls(file);
  await first.open();
  await Promise.all([first.put(record("a")), first.put(record("b"))]);
  await first.close();
  const second = new FileFinishedCalls(file);
  await second.open();
  expect(await second.get("a")).toEqual(record("a", (await second.get("a"))!.at));
  expect((await second.get("b"))?.attempt).toBe(2);
  expect(await second.get("c")).toBeUndefined();
  await second.close();
});

test("get before open reads the file first", async () => {
  const file = fileIn();
  const first = new FileFinishedCalls(file);
  await first.put(record("a"));
  await first.close();
  expect((await new FileFinishedCalls(file).get("a"))?.key).toBe("a");
});

test("a torn last line is skipped; the lines before it still count", async () => {
  const file = fileIn();
  const first = new FileFinishedCalls(file);
  await first.put(record("a"));
  await first.close();
  appendFileSync(file, '{"key":"b","callId":"b","attem');
  const second = new FileFinishedCalls(file);
  await second.open();
  expect((await second.get("a"))?.key).toBe("a");
  expect(await second.get("b")).toBeUndefined();
  await second.close();
});

test("calls past the count or the age are forgotten, and the file is rewritten with the live ones", async () => {
  const file = fileIn();
  const store = new FileFinishedCalls(file, { maxCalls: 3, maxAgeMs: 60_000 });
  await store.put(record("old", Date.now() - 120_000));
  for (const k of ["a", "b", "c", "d", "e"]) await store.put(record(k));
  // Six lines reached twice the bound: rewritten with the three kept.
  expect(lines(file).map((l) => (JSON.parse(l) as FinishedCallRecord).key)).toEqual(["c", "d", "e"]);
  expect(await store.get("old")).toBeUndefined();
  expect(await store.get("a")).toBeUndefined();
  expect((await store.get("e"))?.key).toBe("e");
  await store.put(record("f"));
  expect(lines(file)).toHaveLength(4);
  await store.close();
  const again = new FileFinishedCalls(file, { maxCalls: 3 });
  expect((await again.get("f"))?.key).toBe("f");
  expect(await again.get("c")).toBeUndefined();
  await again.close();
});
