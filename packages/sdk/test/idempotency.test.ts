import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, expect, test } from "vitest";
import { FileIdempotencyStore, MemoryIdempotencyStore, remember, withIdempotency, type IdempotencyStore } from "../src/index.js";

let dir: string;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "wardrik-idem-"));
});

afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

test("runs once per key and returns the remembered result on a repeat", async () => {
  const once = withIdempotency(new FileIdempotencyStore(dir));
  let runs = 0;
  const charge = () => once("key_1", async () => ({ charge: `ch_${++runs}` }));
  expect(await charge()).toEqual({ charge: "ch_1" });
  expect(await charge()).toEqual({ charge: "ch_1" });
  expect(await once("key_2", async () => ({ charge: `ch_${++runs}` }))).toEqual({ charge: "ch_2" });
  expect(runs).toBe(2);
});

test("the file store survives a restart (a new store on the same directory)", async () => {
  await withIdempotency(new FileIdempotencyStore(dir))("key_1", () => "first");
  const again = await withIdempotency(new FileIdempotencyStore(dir))("key_1", () => "second");
  expect(again).toBe("first");
});

test("writes are atomic: one JSON file per key, no temporary files left", async () => {
  const store = new FileIdempotencyStore(dir);
  await withIdempotency(store)("key/with:odd chars", () => ({ ok: true }));
  const files = await readdir(dir);
  expect(files).toHaveLength(1);
  expect(files[0]).toMatch(/^[0-9a-f]{64}\.json$/);
  expect(JSON.parse(await readFile(join(dir, files[0]!), "utf8"))).toMatchObject({ key: "key/with:odd chars", value: { ok: true } });
});

test("concurrent attempts with one key share one run", async () => {
  const once = withIdempotency(new FileIdempotencyStore(dir));
  let runs = 0;
  const results = await Promise.all(
    Array.from({ length: 5 }, () =>
      once("key_c", async () => {
        runs += 1;
        await new Promise((r) => setTimeout(r, 20));
        return runs;
      }),
    ),
  );
  expect(results).toEqual([1, 1, 1, 1, 1]);
  expect(runs).toBe(1);
});

test("a thrown error is not remembered: the next attempt runs again", async () => {
  const once = withIdempotency(new MemoryIdempotencyStore());
  await expect(once("k", () => Promise.reject(new Error("api down")))).rejects.toThrow("api down");
  expect(await once("k", () => "done")).toBe("done");
});

test("null and undefined results count as done", async () => {
  const once = withIdempotency(new FileIdempotencyStore(dir));
  let runs = 0;
  await once("n", () => ((runs += 1), null));
  await once("u", () => ((runs += 1), undefined));
  expect(await once("n", () => ((runs += 1), "again"))).toBeNull();
  expect(await once("u", () => ((runs += 1), "again"))).toBeUndefined();
  expect(runs).toBe(2);
});

test("a result that is not JSON is a clear error", async () => {
  const once = withIdempotency(new FileIdempotencyStore(dir));
  await expect(once("big", () => ({ n: 1n }))).rejects.toThrow('The result for idempotency key "big" cannot be stored as JSON');
});

test("a corrupt record is an error, not a silent re-run", async () => {
  const store = new FileIdempotencyStore(dir);
  await withIdempotency(store)("k", () => 1);
  const [file] = await readdir(dir);
  await writeFile(join(dir, file!), "{half");
  await expect(withIdempotency(store)("k", () => 2)).rejects.toThrow(/corrupt/);
});

test("the store is pluggable", async () => {
  const data = new Map<string, string>();
  const store: IdempotencyStore = {
    get: async (key) => (data.has(key) ? (JSON.parse(data.get(key)!) as { value: unknown }) : undefined),
    set: async (key, record) => void data.set(key, JSON.stringify(record)),
  };
  const once = withIdempotency(store);
  expect(await once("k", () => "a")).toBe("a");
  expect(await once("k", () => "b")).toBe("a");
  expect([...data.keys()]).toEqual(["k"]);
});

test("remember() keeps results under .wardrik/idempotency in the working directory", async () => {
  const cwd = process.cwd();
  process.chdir(dir);
  try {
    expect(await remember("default_key", () => "v1")).toBe("v1");
    expect(await remember("default_key", () => "v2")).toBe("v1");
  } finally {
    process.chdir(cwd);
  }
  expect(await readdir(join(dir, ".wardrik", "idempotency"))).toHaveLength(1);
});
