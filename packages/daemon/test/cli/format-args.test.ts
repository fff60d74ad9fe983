import { describe, expect, it } from "vitest";
import { formatArgs } from "../../src/cli/format-args.js";

describe("formatArgs", () => {
  it("pretty-prints the arguments, indenting every line after the first", () => {
    expect(formatArgs({ path: "a.md", n: 2 }, "  ")).toBe('{\n    "path": "a.md",\n    "n": 2\n  }');
  });

  it("cuts a long string with a note of how much is left out", () => {
    const text = formatArgs({ content: "x".repeat(1434) });
    expect(text).toContain(`"content": "${"x".repeat(200)}"… (1,234 more characters)`);
    expect(text).not.toContain("x".repeat(201));
  });

  it("cuts long strings inside arrays and nested objects too, and keeps short ones", () => {
    const text = formatArgs({ items: [{ body: "y".repeat(250), title: "short" }] }, "", { maxString: 50 });
    expect(text).toContain('"y'.concat("y".repeat(49), '"… (200 more characters)'));
    expect(text).toContain('"title": "short"');
  });

  it("shows at most maxLines lines", () => {
    const text = formatArgs({ list: Array.from({ length: 100 }, (_, i) => i) }, "", { maxLines: 10 });
    const lines = text.split("\n"); // 104 lines in all: 9 shown, then the note
    expect(lines).toHaveLength(10);
    expect(lines[9]).toBe("… (95 more lines)");
  });

  it("prints what is not an object as JSON", () => {
    expect(formatArgs("plain")).toBe('"plain"');
    expect(formatArgs(undefined)).toBe("undefined");
  });
});
