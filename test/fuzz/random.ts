/**
 * Seeded randomness for the fuzz suite: one seed gives the same inputs in the
 * same order, so a crash found with `--seed S` comes back with it. Besides
 * plain values it makes what breaks parsers: deep nesting, long strings,
 * control characters and lone surrogates, truncated and mangled JSON.
 */

export class Random {
  private state: number;

  constructor(seed: number) {
    this.state = seed >>> 0 || 0x9e3779b9;
  }

  /** A float in [0, 1) (mulberry32). */
  next(): number {
    let t = (this.state = (this.state + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** An integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.next() * n);
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)]!;
  }
}

const ODD_CHARACTERS = [
  "\u0000",
  "\u0007",
  "\n",
  "\r\n",
  "\t",
  '"',
  "\\",
  "\u2028",
  "\ud800",
  "\udfff",
  "😀",
  "é",
  "漢",
  "\u202e",
  "%",
  "../",
  "{{x}}",
];

/** A string: usually short words, sometimes odd characters, sometimes long. */
export function randomString(r: Random): string {
  switch (r.int(6)) {
    case 0:
      return "";
    case 1:
      return Array.from({ length: 1 + r.int(8) }, () => r.pick(ODD_CHARACTERS)).join("");
    case 2:
      return r.pick(["a", "x", "é", "😀", " "]).repeat(r.pick([100, 10_000, 200_000]));
    default:
      return Array.from({ length: 1 + r.int(3) }, () =>
        r.pick(["main", "hello", "agt_", "call_", "run_", "default", "*", "turn.*", "0", "-1"]),
      ).join(r.pick(["", " ", "_", "/", "."]));
  }
}

/** Lone surrogates (which URLs cannot carry) as U+FFFD. */
export function wellFormed(text: string): string {
  return text.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, "\ufffd");
}

/** `text` as a header can carry it: printable ASCII only (fetch refuses anything else before sending). */
export function headerValue(text: string): string {
  return text.replace(/[^\t\x20-\x7e]/g, "").trim();
}

/** A number, including the ones that trip range checks. */
export function randomNumber(r: Random): number {
  return r.pick([0, 1, -1, 2 ** 31, 2 ** 53, -(2 ** 53), 0.5, 1e308, -1e-308, r.int(1000), Number.MAX_SAFE_INTEGER + 2]);
}

/** Any JSON value, at most `depth` levels deep. */
export function randomJson(r: Random, depth = 4): unknown {
  const kind = depth <= 0 ? r.int(4) : r.int(7);
  switch (kind) {
    case 0:
      return null;
    case 1:
      return r.chance(0.5);
    case 2:
      return randomNumber(r);
    case 3:
      return randomString(r);
    case 4:
    case 5:
      return Object.fromEntries(Array.from({ length: r.int(5) }, () => [randomString(r).slice(0, 40), randomJson(r, depth - 1)]));
    default:
      return Array.from({ length: r.int(5) }, () => randomJson(r, depth - 1));
  }
}

/** Text that is not JSON a parser wants: nesting bombs, truncations, junk. */
export function hostileText(r: Random, valid: string): string {
  switch (r.int(7)) {
    case 0:
      return "[".repeat(r.pick([65, 1_000, 100_000, 1_000_000]));
    case 1: {
      const n = r.pick([65, 5_000, 300_000]);
      return '{"a":'.repeat(n) + "1" + "}".repeat(n);
    }
    case 2:
      return valid.slice(0, r.int(valid.length + 1));
    case 3:
      return valid.replace(/[:,]/, r.pick(["", "::", ",,", "\u0000"]));
    case 4:
      return Buffer.from(Array.from({ length: r.int(2_000) }, () => r.int(256))).toString("latin1");
    case 5:
      return `${valid}${r.pick(["}", "]", " x", "\n{}"])}`;
    default:
      return r.pick(["", "null", "[]", '""', "1e999", "{", '{"__proto__":{"x":1}}', '{"constructor":{"prototype":{}}}']);
  }
}

/** A JSON body: mostly `valid` (or a mangled copy of it), sometimes hostile text. */
export function fuzzBody(r: Random, valid: unknown): string {
  if (r.chance(0.2)) return hostileText(r, JSON.stringify(valid) ?? "null");
  if (r.chance(0.3)) return JSON.stringify(mutate(r, valid, 3)) ?? "null";
  return JSON.stringify(valid) ?? "null";
}

/** A copy of `value` with some of its parts replaced, dropped or added. */
export function mutate(r: Random, value: unknown, depth: number): unknown {
  if (depth <= 0 || r.chance(0.2)) return randomJson(r, 2);
  if (Array.isArray(value)) return value.map((v) => (r.chance(0.3) ? mutate(r, v, depth - 1) : v));
  if (typeof value === "object" && value !== null) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      if (r.chance(0.15)) continue;
      out[k] = r.chance(0.3) ? mutate(r, v, depth - 1) : v;
    }
    if (r.chance(0.2)) out[randomString(r).slice(0, 20) || "extra"] = randomJson(r, 2);
    return out;
  }
  return randomJson(r, 1);
}
