import { describe, expect, it } from "vitest";
import { compileToolPattern } from "../../src/policy/index.js";

function matches(pattern: string, tool: string): boolean {
  return compileToolPattern(pattern)(tool);
}

describe("compileToolPattern", () => {
  it("matches every tool with *", () => {
    for (const tool of ["files/read", "workers/find_order", "x", ""]) expect(matches("*", tool)).toBe(true);
  });

  it("matches a namespace with ns/*", () => {
    expect(matches("linear/*", "linear/create_issue")).toBe(true);
    expect(matches("linear/*", "linear/")).toBe(true);
    expect(matches("linear/*", "linearx/create_issue")).toBe(false);
    expect(matches("linear/*", "github/linear")).toBe(false);
  });

  it("reads a bare namespace as ns/*", () => {
    expect(matches("files", "files/read")).toBe(true);
    expect(matches("files", "files")).toBe(false);
    expect(matches("files", "filesystem/read")).toBe(false);
  });

  it("matches an exact name only", () => {
    expect(matches("workers/find_order", "workers/find_order")).toBe(true);
    expect(matches("workers/find_order", "workers/find_orders")).toBe(false);
    expect(matches("workers/find_order", "workers/find")).toBe(false);
  });

  it("places * anywhere", () => {
    expect(matches("workers/find_*", "workers/find_order")).toBe(true);
    expect(matches("workers/find_*", "workers/get_order")).toBe(false);
    expect(matches("*/delete_*", "files/delete_file")).toBe(true);
    expect(matches("*/delete_*", "files/undelete")).toBe(false);
    expect(matches("*_order", "workers/find_order")).toBe(true);
    expect(matches("w*s/*_o*r", "workers/find_order")).toBe(true);
    expect(matches("w*s/*_o*r", "workers/find_orders")).toBe(false);
  });

  it("does not let prefix and suffix overlap", () => {
    expect(matches("ab*ba", "aba")).toBe(false);
    expect(matches("ab*ba", "abba")).toBe(true);
    expect(matches("a*b*a", "aba")).toBe(true);
    expect(matches("a*bb*a", "abba")).toBe(true);
    expect(matches("a*bb*a", "abb")).toBe(false);
  });

  it("takes other regex characters literally", () => {
    expect(matches("mcp.search/q+", "mcp.search/q+")).toBe(true);
    expect(matches("mcp.search/q+", "mcpxsearch/qq")).toBe(false);
  });
});
