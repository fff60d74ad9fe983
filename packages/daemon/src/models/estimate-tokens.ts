/**
 * A tokenizer-free guess of how many tokens a text takes.
 *
 * Used on the daemon's thread for every message (the exact count comes later
 * from a worker thread, see token-counter.ts), so it must cost little even for
 * the largest message the API accepts: a text up to SAMPLE_FROM characters is
 * read in one linear pass, a longer one through WINDOWS evenly spaced windows
 * scaled to its length, so the cost stops growing with the text. It follows
 * what BPE vocabularies such as o200k do with each kind of text: common ASCII
 * words are one token, digits go in groups of three, CJK characters and emoji
 * take a token or more each, and bytes that are not text take one each.
 * Measured against o200k it stays within about a factor of 1.5 either way on
 * prose, code, JSON, base64, hex, CJK, emoji and random bytes (see
 * test/models/token-counter.test.ts).
 */
export function estimateTokens(text: string): number {
  if (text.length < SAMPLE_FROM) return Math.ceil(tokensIn(text, 0, text.length));
  const step = text.length / WINDOWS;
  let tokens = 0;
  let chars = 0;
  for (let w = 0; w < WINDOWS; w++) {
    let start = Math.floor(w * step);
    const low = text.charCodeAt(start);
    if (low >= 0xdc00 && low <= 0xdfff) start++; // not the second half of a surrogate pair
    const end = Math.min(text.length, start + WINDOW_CHARS);
    tokens += tokensIn(text, start, end);
    chars += end - start;
  }
  return Math.ceil((tokens * text.length) / chars);
}

/** From this many characters on, a text is estimated from samples. */
export const SAMPLE_FROM = 65_536;
const WINDOWS = 32;
const WINDOW_CHARS = 2_048;

/** The tokens of `text` from `from` to `to`, one linear pass (a fraction: the caller rounds). */
function tokensIn(text: string, from: number, to: number): number {
  let tokens = 0;
  let run = 0; // length of the current run of one character class
  let kind = NONE;
  const flush = () => {
    if (run > 0) tokens += runTokens(kind, run);
    run = 0;
  };
  for (let i = from; i < to; i++) {
    const c = text.charCodeAt(i);
    const k = classOf(c);
    if (k === ASTRAL) {
      flush();
      kind = NONE;
      tokens += 1.75;
      i++; // the low surrogate
      continue;
    }
    // Words keep a leading capital ("The"); a capital after lowercase starts a new token (camelCase, base64).
    const continues = k === kind || (k === LOWER && kind === UPPER && run === 1);
    if (!continues) {
      flush();
      kind = k === LOWER && kind === UPPER ? LOWER : k;
    }
    run++;
  }
  flush();
  return tokens;
}

const NONE = 0;
const LOWER = 1;
const UPPER = 2;
const DIGIT = 3;
const SPACE = 4;
const NEWLINE = 5;
const PUNCT = 6;
const ALPHABETIC = 7; // letters of alphabets beyond ASCII (Latin-1, Greek, Cyrillic, Arabic, Indic...)
const WIDE = 8; // CJK, kana, hangul and other BMP scripts that take about a token a character
const NOT_TEXT = 9; // control characters and U+FFFD: what bytes that are not UTF-8 decode to
const ASTRAL = 10; // a surrogate pair: emoji and rare scripts

function classOf(c: number): number {
  if (c < 0x80) {
    if (c >= 0x61 && c <= 0x7a) return LOWER;
    if (c >= 0x41 && c <= 0x5a) return UPPER;
    if (c >= 0x30 && c <= 0x39) return DIGIT;
    if (c === 0x20 || c === 0x09) return SPACE;
    if (c === 0x0a || c === 0x0d) return NEWLINE;
    if (c < 0x20 || c === 0x7f) return NOT_TEXT;
    return PUNCT;
  }
  if (c >= 0xd800 && c <= 0xdbff) return ASTRAL;
  if (c < 0xa0 || c === 0xfffd || (c >= 0xdc00 && c <= 0xdfff)) return NOT_TEXT;
  if (c < 0x3000) return ALPHABETIC;
  return WIDE;
}

function runTokens(kind: number, n: number): number {
  switch (kind) {
    case LOWER:
    case UPPER:
      return Math.ceil(n / 6);
    case DIGIT:
      return Math.ceil(n / 3);
    case SPACE:
      // One space joins the next word's token; longer runs (indentation) are a token of their own.
      return n > 1 ? Math.ceil(n / 64) : 0;
    case NEWLINE:
      return Math.ceil(n / 8);
    case PUNCT:
      return Math.ceil(n / 2);
    case ALPHABETIC:
      return Math.ceil(n / 2.5);
    case WIDE:
      return n * 1.2;
    default:
      return n;
  }
}
