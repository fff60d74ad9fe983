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
