/**
 * Token counting for compaction: linear in the text, off the daemon's thread.
 * The exact counter agrees with the real tokenizer; the estimate used until
 * the exact count is in stays within a factor of two; the worker answers
 * while the event loop keeps running.
 */
import { randomBytes } from "node:crypto";
import { countTokens as tokenizerCount } from "gpt-tokenizer";
import { afterAll, describe, expect, it } from "vitest";
import { PromptCache } from "../../src/models/build-prompt.js";
import { countExactly } from "../../src/models/count-exactly.js";
import { estimateTokens, SAMPLE_FROM } from "../../src/models/estimate-tokens.js";
import { countTokens, exactTokens, loadTokenizer, stopTokenizer } from "../../src/models/token-counter.js";

afterAll(() => stopTokenizer());

/** Long enough for the worker to count everything asked for on a busy machine; loadTokenizer returns as soon as it has. */
const UNTIL_COUNTED_MS = 60_000;

const pick = (lo: number, hi: number, n: number) =>
  Array.from({ length: n }, (_, i) => String.fromCodePoint(lo + ((i * 7919) % (hi - lo)))).join("");

/** Text shapes a message can take, each about `n` UTF-16 units long. */
function shapes(n: number): Record<string, string> {
  return {
    prose: "The quick brown fox jumps over the lazy dog, and then it rests. ".repeat(Math.ceil(n / 64)).slice(0, n),
    code: "export function add(a: number, b: number): number {\n  return a + b;\n}\n".repeat(Math.ceil(n / 70)).slice(0, n),
    json: JSON.stringify(Array.from({ length: Math.ceil(n / 40) }, (_, i) => ({ id: `ord_${i}`, amount: i * 3 }))).slice(0, n),
    word: "a".repeat(n),
    spaces: " ".repeat(n),
    emoji: "😀".repeat(n / 2),
    cjk: "漢字仮名交じり文".repeat(Math.ceil(n / 8)).slice(0, n),
    kana: pick(0x3041, 0x3096, n),
    base64: randomBytes(n).toString("base64").slice(0, n),
    random: randomBytes(n).toString("utf8").slice(0, n),
  };
}

describe("countExactly", () => {
  it("agrees with the tokenizer counting the whole text (within 1%)", () => {
    for (const [name, text] of Object.entries(shapes(4_000))) {
      const whole = tokenizerCount(text);
      const linear = countExactly(text, tokenizerCount);
      expect(Math.abs(linear - whole), name).toBeLessThanOrEqual(Math.ceil(whole * 0.01));
    }
  });

  // Ten megabytes through the tokenizer: seconds here, over a minute when others share the two cores.
  it("counts the largest messages of every shape, long runs without spaces included", { timeout: 120_000 }, () => {
    // Each of these took the whole tokenizer minutes; cut into pieces they take milliseconds.
    for (const [name, text] of Object.entries(shapes(1_000_000))) {
      const n = countExactly(text, tokenizerCount);
      const sample = text.slice(0, 2_000);
      const perChar = tokenizerCount(sample) / sample.length;
      expect(n / text.length, name).toBeGreaterThan(perChar * 0.9);
      expect(n / text.length, name).toBeLessThan(perChar * 1.1 + 0.01);
    }
  });

  it("counts texts above a megabyte from samples, close to the real count", () => {
    const text = "漢字仮名交じり文".repeat(300_000);
    expect(countExactly(text, tokenizerCount)).toBe(Math.ceil((tokenizerCount("漢字仮名交じり文".repeat(100)) / 800) * text.length));
  });
});

describe("estimateTokens", () => {
  it("stays within a factor of two of the real count for every shape", () => {
    for (const [name, text] of Object.entries(shapes(5_000))) {
      const exact = tokenizerCount(text);
      const estimate = estimateTokens(text);
      expect(estimate / exact, name).toBeGreaterThanOrEqual(0.5);
      expect(estimate / exact, name).toBeLessThanOrEqual(2);
    }
  });

  it("estimates a text past SAMPLE_FROM from samples, within 5% of reading it whole, for every shape", () => {
    for (const [name, text] of Object.entries(shapes(1_000_000))) {
      // Read whole: the estimates of pieces each short enough to be read in full.
      let whole = 0;
      for (let i = 0; i < text.length; i += SAMPLE_FROM - 2) whole += estimateTokens(text.slice(i, i + SAMPLE_FROM - 2));
      const sampled = estimateTokens(text);
      expect(sampled / whole, name).toBeGreaterThan(0.95);
      expect(sampled / whole, name).toBeLessThan(1.05);
    }
  });
});

describe("countTokens", { timeout: UNTIL_COUNTED_MS + 30_000 }, () => {
  it("estimates until the tokenizer's worker has counted a text, then gives the exact count", async () => {
    const text = randomBytes(300_000).toString("utf8");
    expect(countTokens(text)).toBe(estimateTokens(text));
    await loadTokenizer();
    // The worker runs now: the first call asks it, the answer is in after the next load.
    countTokens(text);
    let ticks = 0;
    const ticker = setInterval(() => ticks++, 1);
    await loadTokenizer(UNTIL_COUNTED_MS);
    clearInterval(ticker);
    expect(exactTokens(text)).toBe(countExactly(text, tokenizerCount));
    expect(countTokens(text)).toBe(exactTokens(text));
    // The count was made on another thread: the event loop kept turning meanwhile.
    expect(ticks).toBeGreaterThan(0);
  });

  it("PromptCache.recount replaces its estimates with exact counts once they are in", async () => {
    const entries = Object.values(shapes(5_000)).map((text, i) => ({
      seq: i + 1,
      message: { role: "user" as const, text, input: `msg_${i}` },
    }));
    const cache = new PromptCache(entries);
    await loadTokenizer(UNTIL_COUNTED_MS);
    cache.recount();
    await loadTokenizer(UNTIL_COUNTED_MS);
    cache.recount();
    const exact = entries.reduce((n, e) => n + countExactly(e.message.text, tokenizerCount), 0);
    expect(cache.estimateTokens("")).toBe(exact);
  });
});
