import { expect, test } from "vitest";
import { intervalMs, MIN_INTERVAL_MS } from "../../src/config/positive-number.js";

test("a polling interval from the environment is never below the floor, so a tiny value cannot keep a core busy", () => {
  expect(intervalMs("0.001")).toBe(MIN_INTERVAL_MS);
  expect(intervalMs("1")).toBe(MIN_INTERVAL_MS);
  expect(intervalMs("250")).toBe(250);
});

test("unset, zero, negative or not a number: no setting (the daemon's default applies)", () => {
  for (const value of [undefined, "", "0", "-5", "abc", "Infinity"]) expect(intervalMs(value), String(value)).toBeUndefined();
});
