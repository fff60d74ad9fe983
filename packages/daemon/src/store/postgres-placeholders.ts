/**
 * The store writes `?` placeholders (SQLite's); PostgreSQL numbers them
 * (`$1`, `$2`, ...). A `?` inside a string literal, a quoted identifier, a
 * dollar-quoted body or a comment is text, not a placeholder, and stays.
 */
export function toPostgresPlaceholders(sql: string): string {
  let out = "";
  let n = 0;
  let i = 0;
  while (i < sql.length) {
    const c = sql[i]!;
    if (c === "?") {
      out += `$${++n}`;
      i++;
      continue;
    }
    const end = skipQuoted(sql, i);
    out += sql.slice(i, end);
    i = end;
  }
  return out;
}

/** The index just past the literal, identifier or comment that starts at `i`, or `i + 1`. */
function skipQuoted(sql: string, i: number): number {
  const c = sql[i]!;
  if (c === "'") {
    // E'...' strings let a backslash escape the quote; standard strings only double it.
    const escapes = i > 0 && /[eE]/.test(sql[i - 1]!) && !/[A-Za-z0-9_]/.test(sql[i - 2] ?? "");
    return skipDelimited(sql, i, "'", escapes);
  }
  if (c === '"') return skipDelimited(sql, i, '"', false);
  if (c === "-" && sql[i + 1] === "-") {
    const nl = sql.indexOf("\n", i);
    return nl < 0 ? sql.length : nl + 1;
  }
  if (c === "/" && sql[i + 1] === "*") {
    const close = sql.indexOf("*/", i + 2);
    return close < 0 ? sql.length : close + 2;
  }
  if (c === "$") {
    // $tag$ ... $tag$ (the tag may be empty); `$1` is a numbered parameter, not a tag.
    const tag = /^\$([A-Za-z_][A-Za-z0-9_]*)?\$/.exec(sql.slice(i));
    if (tag) {
      const close = sql.indexOf(tag[0], i + tag[0].length);
      return close < 0 ? sql.length : close + tag[0].length;
    }
  }
  return i + 1;
}

function skipDelimited(sql: string, start: number, quote: string, backslashEscapes: boolean): number {
  let i = start + 1;
  while (i < sql.length) {
    const c = sql[i]!;
    if (backslashEscapes && c === "\\") {
      i += 2;
      continue;
    }
    if (c === quote) {
      if (sql[i + 1] === quote) {
        i += 2;
        continue;
      }
      return i + 1;
    }
    i++;
  }
  return sql.length;
}
