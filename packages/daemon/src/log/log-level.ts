/**
 * Log levels and the threshold setting, apart from the logger so the CLI can
 * offer `--log-level` without loading pino for every command.
 */

/** Levels a call site can write at. */
export type LogLevel = "debug" | "info" | "warn" | "error";

/** Thresholds for `--log-level` / `WARDRIK_LOG_LEVEL`, quietest last. */
export const LOG_THRESHOLDS = ["trace", "debug", "info", "warn", "error", "fatal", "silent"] as const;
export type LogThreshold = (typeof LOG_THRESHOLDS)[number];

export const DEFAULT_LOG_THRESHOLD: LogThreshold = "info";
export const LOG_LEVEL_ENV = "WARDRIK_LOG_LEVEL";

/** The threshold named by `value`; an unknown name is an error that says where it came from. */
export function parseLogThreshold(value: string, where: string): LogThreshold {
  const found = LOG_THRESHOLDS.find((level) => level === value.trim().toLowerCase());
  if (found === undefined) throw new Error(`${where} must be one of ${LOG_THRESHOLDS.join(", ")} (got ${JSON.stringify(value)})`);
  return found;
}

/** `--log-level` if given, else WARDRIK_LOG_LEVEL, else info. */
export function resolveLogThreshold(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): LogThreshold {
  if (flag !== undefined) return parseLogThreshold(flag, "--log-level");
  const fromEnv = env[LOG_LEVEL_ENV];
  if (fromEnv !== undefined && fromEnv !== "") return parseLogThreshold(fromEnv, LOG_LEVEL_ENV);
  return DEFAULT_LOG_THRESHOLD;
}
