/**
 * JSON from outside, read within limits: the one parse every entry point
 * uses (HTTP bodies, worker frames, MCP messages, Slack and webhook payloads,
 * a model's tool arguments).
 *
 * V8's JSON.parse does not overflow on deep nesting, but it spends about a
 * second on a couple of megabytes of brackets, and what comes after it (zod,
 * JSON Schema checks, JSON.stringify, redaction) walks values recursively and
 * overflows the stack. So the text is first scanned once, linearly and without
 * recursion, for how deep its brackets go outside strings; only text within
 * the limits reaches JSON.parse.
 */
import { WardrikError } from "./errors.js";

/** How deep JSON from outside may nest unless config.yaml says otherwise (`limits.json_depth`). */
export const DEFAULT_JSON_DEPTH = 64;

export interface JsonLimits {
  /** Containers (objects and arrays) inside one another; `{}` is 1, `[{}]` is 2. */
  maxDepth: number;
  /** Largest text in UTF-8 bytes; no limit when left out (the transport already bounds it). */
  maxBytes?: number;
}

/**
 * Where `text` opens a container deeper than `maxDepth` (its offset in the
 * text), counting brackets outside strings; undefined when it never does.
 * One pass, constant memory: cheap for any input size. A string is skipped
 * with indexOf to its closing quote (one not escaped by an odd run of
 * backslashes) rather than a character at a time: strings are most of a
 * message, and this check runs on every frame a worker sends.
 */
export function tooDeepAt(text: string, maxDepth: number): number | undefined {
  let depth = 0;
  const length = text.length;
  for (let i = 0; i < length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      i = closingQuote(text, i);
      if (i < 0) return undefined; // never closed: JSON.parse refuses it
    } else if (c === 0x7b || c === 0x5b) {
      if (++depth > maxDepth) return i;
    } else if ((c === 0x7d || c === 0x5d) && depth > 0) {
      depth--;
    }
  }
  return undefined;
}

/** The offset of the quote that closes the string opened at `open`, or -1. Each backslash is looked at once: linear. */
function closingQuote(text: string, open: number): number {
  let q = open;
  for (;;) {
    q = text.indexOf('"', q + 1);
    if (q < 0) return -1;
    let b = q - 1;
    while (text.charCodeAt(b) === 0x5c) b--;
    // An even run of backslashes (none included) escapes only itself: the quote closes the string.
    if ((q - 1 - b) % 2 === 0) return q;
  }
}

/**
 * Parses JSON that came from outside. Text nested deeper than `maxDepth` is
 * refused before it is parsed, text over `maxBytes` before it is scanned.
 * Throws a WardrikError: `json_too_deep` (400), `body_too_large` (413) or
 * `invalid_json` (400), whose message names `what` ("The body", "The
 * message") and where the problem is.
 */
export function parseJsonWithin(text: string, limits: JsonLimits, what = "The body"): unknown {
  if (limits.maxBytes !== undefined && text.length > limits.maxBytes / 3) {
    // A UTF-16 unit is at most 3 bytes in UTF-8: only a text that might be over is measured.
    const bytes = utf8Bytes(text);
    if (bytes > limits.maxBytes)
      throw new WardrikError("body_too_large", `${what} is ${bytes} bytes; the limit is ${limits.maxBytes}. Send less.`);
  }
  const at = tooDeepAt(text, limits.maxDepth);
  if (at !== undefined) throw tooDeep(what, limits.maxDepth, `at character ${at}`);
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw new WardrikError("invalid_json", `${what} is not valid JSON: ${(err as Error).message}`);
  }
}

/**
 * Whether a value already parsed (by a library, such as a provider's or the
 * MCP SDK's client) nests deeper than `maxDepth`. Walks with its own stack,
 * never recursion, and stops at the first container past the limit.
 */
export function valueTooDeep(value: unknown, maxDepth: number): boolean {
  const stack: { v: unknown; depth: number }[] = [{ v: value, depth: 0 }];
  while (stack.length > 0) {
    const { v, depth } = stack.pop()!;
    if (typeof v !== "object" || v === null) continue;
    if (depth + 1 > maxDepth) return true;
    const children = Array.isArray(v) ? v : Object.values(v as Record<string, unknown>);
    for (const child of children) if (typeof child === "object" && child !== null) stack.push({ v: child, depth: depth + 1 });
  }
  return false;
}

/** UTF-8 length of a string without encoding it (the protocol also runs in browsers: no Buffer). */
function utf8Bytes(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) bytes += 1;
    else if (c < 0x800) bytes += 2;
    else if (c >= 0xd800 && c <= 0xdbff && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      bytes += 4; // a surrogate pair
      i++;
    } else bytes += 3;
  }
  return bytes;
}

/** The error for a value past the limit, for callers that checked with `valueTooDeep`. */
export function tooDeep(what: string, maxDepth: number, where?: string): WardrikError {
  return new WardrikError(
    "json_too_deep",
    `${what} nests objects and arrays deeper than ${maxDepth} levels${where ? ` (${where})` : ""}; send flatter JSON (the daemon's limits.json_depth sets the limit).`,
  );
}
