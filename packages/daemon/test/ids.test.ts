import { decodeTime, isValid } from "ulid";
import { describe, expect, it } from "vitest";
import { ulidFactory, ulidIds } from "../src/ids.js";

describe("ULIDs", () => {
  it("are valid ULIDs whose time part is the clock's millisecond (checked with the ulid package)", () => {
    const make = ulidFactory();
    for (const ms of [0, 1, 1_700_000_000_123, 0xffff_ffff_ffff]) {
      const id = make(ms);
      expect(id).toMatch(/^[0-9A-HJKMNP-TV-Z]{26}$/);
      expect(isValid(id)).toBe(true);
      expect(decodeTime(id)).toBe(ms);
    }
  });

  it("sort in the order they were made, within one millisecond and when the clock steps back", () => {
    const make = ulidFactory();
    const ids = [make(1000), make(1000), make(1000), make(999), make(999), make(1001), make(1001)];
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(ids).size).toBe(ids.length);
    // Made while the clock stood behind: they keep the last time, as the ulid package's monotonic factory does.
    expect(decodeTime(ids[3]!)).toBe(1000);
    expect(decodeTime(ids[5]!)).toBe(1001);
  });

  it("differ in their random part between milliseconds and between factories", () => {
    const a = ulidFactory();
    const b = ulidFactory();
    const randoms = new Set([a(5), a(6), b(5), b(6)].map((id) => id.slice(10)));
    expect(randoms.size).toBe(4);
  });

  it("refuse a time a ULID cannot hold", () => {
    const make = ulidFactory();
    expect(() => make(-1)).toThrow(/cannot make a ULID for time -1/);
    expect(() => make(2 ** 48)).toThrow(/cannot make a ULID/);
  });

  it("carry the kind's prefix", () => {
    const ids = ulidIds({ now: () => new Date(1_700_000_000_000) });
    const id = ids.next("event");
    expect(id).toMatch(/^evt_[0-9A-Z]{26}$/);
    expect(decodeTime(id.slice(4))).toBe(1_700_000_000_000);
  });
});
