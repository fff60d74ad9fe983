import type { McpServerEntry } from "../../config/types.js";

/** Shortest value treated as a secret; shorter ones ("1", "on") would mangle every message. */
const MIN_SECRET_LENGTH = 4;

/**
 * Returns a function that blanks a server's configured env values, header
 * values and URL credentials out of text, so that messages built from a
 * server's stderr or errors never carry a resolved `${secret:}`.
 */
export function redactorFor(entry: McpServerEntry): (text: string) => string {
  const secrets = new Set<string>();
  const add = (v: string | undefined) => {
    if (v && v.length >= MIN_SECRET_LENGTH) secrets.add(v);
  };
  for (const v of Object.values(entry.env ?? {})) add(v);
  for (const v of Object.values(entry.headers ?? {})) {
    add(v);
    // `Bearer abc…`: the token alone may show up too.
    for (const part of v.split(/\s+/)) add(part);
  }
  for (const a of entry.args ?? []) {
    const eq = a.indexOf("=");
    if (a.startsWith("-") && eq > 0 && /token|key|secret|password/i.test(a.slice(0, eq))) add(a.slice(eq + 1));
  }
  if (entry.url) {
    try {
      const u = new URL(entry.url);
      add(u.password);
      for (const v of u.searchParams.values()) add(v);
    } catch {
      // validated by the config loader
    }
  }
  // Longest first, so a secret that contains another is blanked whole.
  const list = [...secrets].sort((a, b) => b.length - a.length);
  return (text) => {
    let out = text;
    for (const s of list) out = out.split(s).join("[redacted]");
    return out;
  };
}

/** The URL without credentials or query, for messages. */
export function displayUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname}`;
  } catch {
    return "(invalid URL)";
  }
}
