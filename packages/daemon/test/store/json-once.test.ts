/**
 * A large output's JSON is made once (json-once.ts): the call's row, the
 * history's size check, the token count and the call.completed event reuse it.
 */
import { describe, expect, it } from "vitest";
import { dataJson, jsonOnce, valueJson } from "../../src/store/json-once.js";

const large = () => ({ rows: Array.from({ length: 500 }, (_, i) => `row ${i} ${"é".repeat(20)}`), quote: 'a "b" \\ \u0000' });

describe("jsonOnce", () => {
  it("serialises a large object once: a later call gives the same text without walking it again", () => {
    const output = large();
    const first = jsonOnce(output);
    expect(first).toBe(JSON.stringify(output));
    // Changed behind its back (outputs are not changed once a call has them): the kept text shows it was not walked again.
    output.rows.push("later");
    expect(jsonOnce(output)).toBe(first);
  });

  it("keeps nothing of a small object", () => {
    const output = { rows: ["a"] };
    jsonOnce(output);
    output.rows.push("b");
    expect(jsonOnce(output)).toBe('{"rows":["a","b"]}');
  });

  it("valueJson is JSON.stringify(value ?? null) for every kind of value", () => {
    for (const v of [undefined, null, 1, "s", true, [1, 2], { a: 1 }, large()]) expect(valueJson(v)).toBe(JSON.stringify(v ?? null));
  });
});

describe("dataJson", () => {
  it("is JSON.stringify of an event's data, with a known output's text put in its place", () => {
    const output = large();
    jsonOnce(output);
    const data = { call: "call_1", tool: "workers/big", output, cost_usd: 0, attempt: 1, note: "\u0000json-once-" };
    expect(dataJson(data)).toBe(JSON.stringify(data));
    expect(JSON.parse(dataJson(data))).toEqual(data);
    const two = { a: output, b: { small: true }, c: output };
    expect(dataJson(two)).toBe(JSON.stringify(two));
    expect(dataJson({ message: "m", text: "t" })).toBe('{"message":"m","text":"t"}');
  });
});
