/** How numbers, times and JSON read in the console. */

export function usd(value: number): string {
  if (value === 0) return "$0.00";
  return value < 0.01 ? `$${value.toFixed(4)}` : `$${value.toFixed(2)}`;
}

export function ago(iso: string | undefined, now = Date.now()): string {
  if (!iso) return "never";
  const s = Math.max(0, Math.round((now - Date.parse(iso)) / 1000));
  if (s < 10) return "just now";
  if (s < 60) return `${s} s ago`;
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s < 86_400) return `${Math.floor(s / 3600)} h ago`;
  return `${Math.floor(s / 86_400)} d ago`;
}

export function clock(iso: string): string {
  return new Date(iso).toLocaleTimeString();
}

/** When something happened, short: the time today ("17:05:12"), else the day and time ("4 Dec, 17:05"). */
export function when(iso: string, now = new Date()): string {
  const d = new Date(iso);
  if (d.toDateString() === now.toDateString()) return d.toLocaleTimeString();
  return d.toLocaleString(undefined, { day: "numeric", month: "short", hour: "2-digit", minute: "2-digit" });
}

/** How long something took: "350 ms", "4.2 s", "3 min 5 s", "2 h 10 min". */
export function duration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) return "—";
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)} s`;
  const s = Math.round(ms / 1000);
  if (s < 3600) return `${Math.floor(s / 60)} min ${s % 60} s`;
  return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
}

/** Milliseconds between two times (ISO 8601); `to` defaults to now. */
export function between(from: string, to?: string): number {
  return (to === undefined ? Date.now() : Date.parse(to)) - Date.parse(from);
}

export function pretty(value: unknown): string {
  return typeof value === "string" ? value : JSON.stringify(value, null, 2);
}

/** One line for a JSON value, cut at `max` characters. */
export function oneLine(value: unknown, max = 120): string {
  const text = typeof value === "string" ? value : JSON.stringify(value);
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

export function shortType(type: string): string {
  return type.startsWith("dev.wardrik.") ? type.slice("dev.wardrik.".length) : type;
}

/** The agent an event of the org-wide feed belongs to: the last part of its source. */
export function agentOfSource(source: string): string {
  return source.slice(source.lastIndexOf("/") + 1);
}
