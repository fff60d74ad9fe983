/** The finished-calls examples of packages/sdk/README.md, as the compiler reads them. */
import { expectTypeOf, test } from "vitest";
import { FileFinishedCalls, Wardrik, type FinishedCallRecord, type FinishedCallStore } from "../src/index.js";

test("a file-backed store is a WardrikOptions.finishedCalls", () => {
  const wardrik = new Wardrik({
    finishedCalls: new FileFinishedCalls(".wardrik/finished-calls.jsonl", { maxCalls: 10_000, maxAgeMs: 24 * 3600_000 }),
  });
  expectTypeOf(wardrik).toEqualTypeOf<Wardrik>();
});

test("any get/put pair over records is a store", () => {
  class TableFinishedCalls implements FinishedCallStore {
    constructor(
      private readonly db: { get(key: string): Promise<FinishedCallRecord | undefined>; put(r: FinishedCallRecord): Promise<void> },
    ) {}
    get(key: string) {
      return this.db.get(key);
    }
    put(record: FinishedCallRecord) {
      return this.db.put(record);
    }
  }
  expectTypeOf<TableFinishedCalls>().toExtend<FinishedCallStore>();
  expectTypeOf<FinishedCallRecord>().toEqualTypeOf<{ key: string; callId: string; attempt: number; at: number; result: string }>();
});
