import { describe, expect, it } from "vitest";
import { toPostgresPlaceholders } from "../../src/store/postgres-placeholders.js";

describe("toPostgresPlaceholders", () => {
  it("numbers the ? placeholders in order", () => {
    expect(toPostgresPlaceholders("UPDATE t SET a = ?, b = ? WHERE id = ? AND x IN (?, ?)")).toBe(
      "UPDATE t SET a = $1, b = $2 WHERE id = $3 AND x IN ($4, $5)",
    );
  });

  it.each([
    ["a string literal", "SELECT 'why?' AS q, ?", "SELECT 'why?' AS q, $1"],
    ["a doubled quote inside a literal", "SELECT 'it''s ?', ?", "SELECT 'it''s ?', $1"],
    ["an E'' literal with a backslash-escaped quote", "SELECT E'a\\'?', ?", "SELECT E'a\\'?', $1"],
    ["a quoted identifier", 'SELECT "odd?name" FROM t WHERE x = ?', 'SELECT "odd?name" FROM t WHERE x = $1'],
    ["a line comment", "SELECT ? -- really?\n, ?", "SELECT $1 -- really?\n, $2"],
    ["a block comment", "SELECT /* ? */ ?", "SELECT /* ? */ $1"],
    ["a dollar-quoted body", "SELECT $$ ? $$, $fn$ ? $fn$, ?", "SELECT $$ ? $$, $fn$ ? $fn$, $1"],
  ])("leaves a ? inside %s alone", (_what, sql, expected) => {
    expect(toPostgresPlaceholders(sql)).toBe(expected);
  });

  it("does not read a backslash in a standard literal as an escape", () => {
    // 'a\' is a complete literal (standard_conforming_strings), so the ? after it is a placeholder.
    expect(toPostgresPlaceholders("SELECT 'a\\', ?")).toBe("SELECT 'a\\', $1");
  });
});
