/**
 * Exact token counting with a BPE tokenizer, in time linear in the text.
 *
 * A BPE tokenizer splits text into words first and merges bytes within each
 * word; the merging is quadratic in the word's length, so one long run
 * without spaces (a 1 MB emoji string, a base64 blob), or of spaces, took
 * minutes. Cutting such runs into pieces of `PIECE` characters bounds every word, at the cost
 * of at most one token per cut. Texts above `SAMPLE_ABOVE` characters are
 * counted from evenly spread samples and scaled, so one text costs bounded work.
 *
 * This function runs inside the token counter's worker thread, where it is
 * sent as source text: it must not use anything from outside its own body.
 */
export function countExactly(text: string, count: (piece: string) => number): number {
  const PIECE = 128;
  const SAMPLE_ABOVE = 1_048_576;
  const SAMPLES = 32;
  const SAMPLE_CHARS = 8_192;

  const isAlnum = (c: number) => (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a);
  // Not the apostrophe: contractions ("'s") belong to the word before.
  const isPunct = (c: number) => c > 0x20 && c < 0x7f && c !== 0x27 && !isAlnum(c);

  const countLinear = (t: string): number => {
    let tokens = 0;
    let start = 0; // start of the text not yet counted
    const longRun = new RegExp(`\\S{${PIECE + 1},}|\\s{${PIECE + 1},}`, "g");
    for (let m = longRun.exec(t); m !== null; m = longRun.exec(t)) {
      if (m.index > start) tokens += count(t.slice(start, m.index));
      const end = m.index + m[0].length;
      for (let i = m.index; i < end;) {
        let j = Math.min(end, i + PIECE);
        if (j < end) {
          // Prefer a cut where the tokenizer's pre-split cuts anyway: a letter or digit followed by
          // ASCII punctuation (minified JSON, paths), so the count stays exact.
          for (let k = j; k > j - PIECE / 4; k--) {
            if (isAlnum(t.charCodeAt(k - 1)) && isPunct(t.charCodeAt(k))) {
              j = k;
              break;
            }
          }
          // Never split a surrogate pair: half an emoji would count as two broken bytes.
          const c = t.charCodeAt(j - 1);
          if (c >= 0xd800 && c <= 0xdbff) j--;
        }
        tokens += count(t.slice(i, j));
        i = j;
      }
      start = end;
    }
    if (start < t.length) tokens += count(t.slice(start));
    return tokens;
  };

  if (text.length <= SAMPLE_ABOVE) return countLinear(text);
  let sampled = 0;
  let sampledChars = 0;
  const step = Math.floor((text.length - SAMPLE_CHARS) / (SAMPLES - 1));
  for (let s = 0; s < SAMPLES; s++) {
    let from = s * step;
    // Start and end on whole characters.
    const first = text.charCodeAt(from);
    if (first >= 0xdc00 && first <= 0xdfff) from++;
    let to = Math.min(text.length, from + SAMPLE_CHARS);
    const last = text.charCodeAt(to - 1);
    if (to < text.length && last >= 0xd800 && last <= 0xdbff) to--;
    sampled += countLinear(text.slice(from, to));
    sampledChars += to - from;
  }
  return Math.ceil((sampled / sampledChars) * text.length);
}
