/**
 * One JSON log line made readable for a terminal:
 * `14:03:07 INFO  wardrik daemon listening on http://127.0.0.1:7373 (org default) org=default`.
 * Small on purpose: pino-pretty would pull in a dozen packages for this.
 */

export interface PrettyOptions {
  color: boolean;
}

const LEVEL_COLORS: Record<string, string> = {
  trace: "90",
  debug: "90",
  info: "36",
  warn: "33",
  error: "31",
  fatal: "41;97",
};

/** Keys every line has, shown in the prefix or not at all. */
const HIDDEN = new Set(["time", "level", "msg", "pid"]);

export function prettyLine(json: string, options: PrettyOptions): string {
  let record: Record<string, unknown>;
  try {
    record = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return json.endsWith("\n") ? json : `${json}\n`;
  }
  const level = typeof record.level === "string" ? record.level : "info";
  let label = level.toUpperCase().padEnd(5);
  if (options.color && LEVEL_COLORS[level] !== undefined) label = `\u001b[${LEVEL_COLORS[level]}m${label}\u001b[0m`;
  const parts = [clock(record.time), label, typeof record.msg === "string" ? record.msg : ""];
  const extra: string[] = [];
  for (const [key, value] of Object.entries(record)) {
    if (HIDDEN.has(key) || value === undefined) continue;
    if (key === "err" && isErrorRecord(value)) {
      // A stack reads better on its own lines than squeezed into key=value.
      const lines = String(value.stack ?? value.message).split("\n");
      extra.push(...lines.map((line) => `\n    ${line.trim()}`));
      continue;
    }
    parts.push(`${key}=${formatValue(value)}`);
  }
  return `${parts.filter((p) => p !== "").join(" ")}${extra.join("")}\n`;
}

function clock(time: unknown): string {
  const date = typeof time === "string" || typeof time === "number" ? new Date(time) : new Date();
  if (Number.isNaN(date.getTime())) return "";
  const two = (n: number) => String(n).padStart(2, "0");
  return `${two(date.getHours())}:${two(date.getMinutes())}:${two(date.getSeconds())}`;
}

function formatValue(value: unknown): string {
  if (typeof value === "string") return /^[^\s"=]+$/.test(value) ? value : JSON.stringify(value);
  return JSON.stringify(value) ?? String(value);
}

function isErrorRecord(value: unknown): value is { message?: unknown; stack?: unknown } {
  return typeof value === "object" && value !== null && ("stack" in value || "message" in value);
}
