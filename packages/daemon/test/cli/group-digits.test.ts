/** groupDigits writes whole numbers as toLocaleString("en-US") does, without loading ICU's locale data (#32). */
import { describe, expect, it } from "vitest";
import { groupDigits } from "../../src/cli/group-digits.js";

describe("groupDigits", () => {
  it("writes whole numbers as toLocaleString('en-US') does", () => {
    for (const n of [0, 7, 999, 1000, 12_345, 999_999, 1_000_000, 1_234_567_890, -1, -1234, -999_999, Number.MAX_SAFE_INTEGER])
      expect(groupDigits(n), String(n)).toBe(n.toLocaleString("en-US"));
  });

  it("leaves fractions and numbers beyond 2^53 to toLocaleString", () => {
    for (const n of [0.5, 1234.5678, 2 ** 60]) expect(groupDigits(n)).toBe(n.toLocaleString("en-US"));
  });
});
