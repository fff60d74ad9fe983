import { describe, expect, it } from "vitest";
import { WardrikError, parseJsonWithin, tooDeepAt, valueTooDeep } from "@wardrik/protocol";

const nested = (n: number) => "[".repeat(n) + "]".repeat(n);

function thrown(fn: () => unknown): WardrikError {
  try {
    fn();
  } catch (err) {
    if (WardrikError.isInstance(err)) return err;
    throw err;
  }
  throw new Error("did not throw");
}

describe("parseJsonWithin", () => {
  it("parses JSON up to the depth limit and refuses one level more, saying where", () => {
    expect(parseJsonWithin(nested(4), { maxDepth: 4 })).toEqual([[[[]]]]);
    const e = thrown(() => parseJsonWithin('{"a":' + nested(4) + "}", { maxDepth: 4 }));
    expect(e.code).toBe("json_too_deep");
    expect(e.status).toBe(400);
    expect(e.message).toMatch(/The body nests objects and arrays deeper than 4 levels \(at character 8\)/);
    expect(e.message).toContain("limits.json_depth");
  });

  it("counts brackets only outside strings, escaped quotes included", () => {
    const text = JSON.stringify({ s: '[[[[[[[[ \\" {{{{{{{', t: ['"[[[['] });
    expect(parseJsonWithin(text, { maxDepth: 2 })).toEqual(JSON.parse(text));
    expect(tooDeepAt(text, 2)).toBeUndefined();
    expect(tooDeepAt(text, 1)).toBe(text.indexOf('["'));
  });

  it("ends a string at a quote after an even run of backslashes, not after an odd one", () => {
    // "\\" is one escaped backslash: the quote after it closes the string, so the brackets after count.
    const closed = '{"a":"x\\\\","b":[[[1]]]}';
    expect(JSON.parse(closed)).toEqual({ a: "x\\", b: [[[1]]] });
    expect(tooDeepAt(closed, 3)).toBe(closed.indexOf("[[[") + 2);
    // "\\\"" escapes the quote: the brackets after it are still inside the string.
    const open = '{"a":"x\\\\\\"[[[[","b":1}';
    expect(JSON.parse(open)).toEqual({ a: 'x\\"[[[[', b: 1 });
    expect(tooDeepAt(open, 1)).toBeUndefined();
    // A string never closed hides nothing: JSON.parse refuses the text.
    expect(tooDeepAt('["abc', 0)).toBe(0);
    expect(thrown(() => parseJsonWithin('["abc\\"]', { maxDepth: 4 })).code).toBe("invalid_json");
  });

  it("refuses 2 MB of unclosed brackets at the first bracket past the limit", () => {
    const e = thrown(() => parseJsonWithin("[".repeat(2_000_000), { maxDepth: 64 }, "The message"));
    expect(e.code).toBe("json_too_deep");
    expect(e.message).toMatch(/^The message nests .* \(at character 64\)/);
  });

  it("refuses text over maxBytes, counted in UTF-8", () => {
    expect(parseJsonWithin(JSON.stringify("ééé"), { maxDepth: 1, maxBytes: 8 })).toBe("ééé");
    const e = thrown(() => parseJsonWithin(JSON.stringify("éééé"), { maxDepth: 1, maxBytes: 8 }));
    expect(e.code).toBe("body_too_large");
    expect(e.status).toBe(413);
    expect(e.message).toBe("The body is 10 bytes; the limit is 8. Send less.");
    expect(thrown(() => parseJsonWithin(JSON.stringify("😀😀"), { maxDepth: 1, maxBytes: 9 })).message).toContain("10 bytes");
  });

  it("answers invalid JSON as invalid_json", () => {
    const e = thrown(() => parseJsonWithin("{nope", { maxDepth: 64 }));
    expect(e.code).toBe("invalid_json");
    expect(e.message).toMatch(/^The body is not valid JSON: /);
  });
});

describe("valueTooDeep", () => {
  it("measures a parsed value without recursion, even 300,000 levels deep", () => {
    expect(valueTooDeep({ a: [1, { b: null }] }, 3)).toBe(false);
    expect(valueTooDeep({ a: [1, { b: {} }] }, 3)).toBe(true);
    expect(valueTooDeep("text", 0)).toBe(false);
    let deep: unknown = {};
    for (let i = 0; i < 300_000; i++) deep = { a: deep };
    expect(valueTooDeep(deep, 64)).toBe(true);
  });
});
