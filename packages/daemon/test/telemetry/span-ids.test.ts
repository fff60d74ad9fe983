/**
 * Child span IDs (telemetry/span-ids.ts): 16 lowercase hex digits, never all
 * zeros (W3C trace context calls that invalid), and unique within a trace
 * even when several processes (a restarted daemon, another cluster node)
 * write spans of the same turn, each with a generator of its own.
 */
import { describe, expect, it } from "vitest";
import { SpanIds } from "../../src/telemetry/span-ids.js";

const HEX16 = /^[0-9a-f]{16}$/;
const ZERO = "0".repeat(16);

describe("span IDs", () => {
  it("are 16 hex digits, not zero, and unique across two generators (two processes)", () => {
    const a = new SpanIds();
    const b = new SpanIds();
    const seen = new Set<string>();
    for (let i = 0; i < 10_000; i++) {
      for (const id of [a.next(), b.next()]) {
        expect(id).toMatch(HEX16);
        expect(id).not.toBe(ZERO);
        seen.add(id);
      }
    }
    expect(seen.size).toBe(20_000);
  });

  it("stay unique past the counter's end: after 65,535 IDs a new prefix is drawn, the counter does not start over on old IDs", () => {
    const ids = new SpanIds();
    const all = Array.from({ length: 70_000 }, () => ids.next());
    expect(new Set(all).size).toBe(70_000);
    const prefix = (id: string) => id.slice(0, 12);
    expect(new Set(all.slice(0, 65_535).map(prefix)).size).toBe(1);
    expect(prefix(all[65_535]!)).not.toBe(prefix(all[0]!));
    expect(all[65_535]!.slice(12)).toBe("0001");
  });

  it("are never all zeros, even when the random prefix is", () => {
    const zeros = new SpanIds({ generateSpanId: () => ZERO });
    for (let i = 0; i < 70_000; i++) {
      const id = zeros.next();
      expect(id).toMatch(HEX16);
      expect(id).not.toBe(ZERO);
    }
  });
});
