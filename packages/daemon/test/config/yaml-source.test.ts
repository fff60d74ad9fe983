import { describe, expect, it } from "vitest";
import { ConfigError, formatKeyPath, parseYamlSource, plainSource } from "../../src/config/index.js";

const TEXT = [
  "org: acme", //                      1
  "models:", //                        2
  "  local:", //                       3
  "    price:", //                     4
  "      input: 0.1", //               5
  "tools:", //                         6
  "  - files", //                      7
  "  - linear/*", //                   8
  "base: &b { url: http://x }", //     9
  "alias: *b", //                      10
].join("\n");

function thrown(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (error) {
    if (ConfigError.isInstance(error)) return error;
    throw error;
  }
  throw new Error("expected a ConfigError");
}

describe("parseYamlSource", () => {
  it("finds the 1-based line of keys, nested keys and list items", () => {
    const src = parseYamlSource(TEXT, "config.yaml");
    expect(src.lineOf(["org"])).toBe(1);
    expect(src.lineOf(["models", "local"])).toBe(3);
    expect(src.lineOf(["models", "local", "price", "input"])).toBe(5);
    expect(src.lineOf(["tools", 1])).toBe(8);
    expect(src.lineOf(["alias", "url"])).toBe(9);
  });

  it("falls back to the deepest existing parent for a missing key", () => {
    const src = parseYamlSource(TEXT, "config.yaml");
    expect(src.lineOf(["models", "local", "price", "output"])).toBe(4);
    expect(src.lineOf(["nope"])).toBe(1);
  });

  it("shifts lines by firstLine, as for frontmatter", () => {
    const src = parseYamlSource("a: 1\nb: 2\n", "agents/x.md", { firstLine: 2, rootLine: 1 });
    expect(src.lineOf(["b"])).toBe(3);
    expect(src.lineOf([])).toBe(1);
  });

  it("reports a syntax error with the parser's line, shifted", () => {
    const error = thrown(() => parseYamlSource("a: 1\nb: [1, 2\nc: 3\n", "agents/x.md", { firstLine: 2 }));
    expect(error.file).toBe("agents/x.md");
    // The parser notices the unclosed `[` on the next line (line 3 of the text, line 4 of the file).
    expect(error.line).toBe(4);
    expect(error.message).toMatch(/^agents\/x\.md:4: invalid YAML: Flow sequence/);
  });

  it("rejects duplicate keys at the duplicate's line", () => {
    const error = thrown(() => parseYamlSource("a: 1\nb: 2\na: 3\n", "config.yaml"));
    expect(error.line).toBe(3);
    expect(error.message).toContain("unique");
  });
});

describe("ConfigError", () => {
  it("formats file:line: detail and carries the key", () => {
    const src = parseYamlSource(TEXT, "config.yaml");
    const error = thrown(() => src.fail(["models", "local", "price", "input"], "models.local.price.input must be a number"));
    expect(error.message).toBe("config.yaml:5: models.local.price.input must be a number");
    expect(error.key).toBe("models.local.price.input");
    expect(error.line).toBe(5);
    expect(error).toBeInstanceOf(Error);
  });

  it("omits the line for plain (JSON) sources", () => {
    const error = thrown(() => plainSource({}, "request body").fail(["tools", 0], "tools[0] is bad"));
    expect(error.message).toBe("request body: tools[0] is bad");
    expect(error.line).toBeUndefined();
    expect(error.key).toBe("tools[0]");
  });

  it("is recognised by isInstance, and other errors are not", () => {
    expect(ConfigError.isInstance(new ConfigError({ file: "f", detail: "d" }))).toBe(true);
    expect(ConfigError.isInstance(new Error("x"))).toBe(false);
    expect(ConfigError.isInstance(null)).toBe(false);
  });

  it("formats key paths with dots and indexes", () => {
    expect(formatKeyPath(["subscribers", 0, "url"])).toBe("subscribers[0].url");
    expect(formatKeyPath(["models", "local", "price", "input"])).toBe("models.local.price.input");
  });
});
