/** One way to log across the daemon: a level, a message, and structured fields. */
export type LogLevel = "debug" | "info" | "warn" | "error";
export type Logger = (level: LogLevel, msg: string, fields?: Record<string, unknown>) => void;

export const silentLogger: Logger = () => undefined;
