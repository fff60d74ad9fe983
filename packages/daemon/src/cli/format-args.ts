import { groupDigits } from "./group-digits.js";

export interface FormatArgsOptions {
  /** Longest string value shown whole; longer ones are cut with a note. */
  maxString?: number;
  /** Most lines shown; the rest is summed up in one line. */
  maxLines?: number;
}

/** A private-use character: JSON.stringify leaves it as is, and arguments will not contain it followed by digits in quotes. */
const CUT = "\uE000";

/**
 * A call's arguments for a person deciding on it: pretty-printed JSON, long
 * string values cut with a note of how much is left out, and at most
 * `maxLines` lines. `indent` starts every line after the first.
 */
export function formatArgs(args: unknown, indent = "", options: FormatArgsOptions = {}): string {
  const maxString = options.maxString ?? 200;
  const maxLines = options.maxLines ?? 30;
  const cuts: string[] = [];
  const shorten = (v: unknown): unknown => {
    if (typeof v === "string" && v.length > maxString) {
      cuts.push(`${JSON.stringify(v.slice(0, maxString))}… (${groupDigits(v.length - maxString)} more characters)`);
      return `${CUT}${cuts.length - 1}`;
    }
    if (Array.isArray(v)) return v.map(shorten);
    if (v && typeof v === "object") return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, shorten(x)]));
    return v;
  };
  const text = JSON.stringify(shorten(args), null, 2) ?? String(args);
  const marker = new RegExp(`"${CUT}(\\d+)"`, "g");
  let lines = text.replace(marker, (_m, i: string) => cuts[Number(i)]!).split("\n");
  if (lines.length > maxLines) {
    const more = lines.length - (maxLines - 1);
    lines = [...lines.slice(0, maxLines - 1), `… (${groupDigits(more)} more lines)`];
  }
  return lines.join(`\n${indent}`);
}
