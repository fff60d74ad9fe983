/**
 * The daemon's one logger: a function with the call shape every part already
 * uses, writing pino's lines. JSON lines when the output is not a terminal (so a
 * log shipper can read every line), short readable lines when it is.
 *
 * A line of strings, numbers, booleans and plain data is written here, as pino
 * writes it (`{"level","time","pid",...fields,"msg"}`); a line pino writes in
 * its own way (an error under `err`, a value JSON.stringify refuses: a BigInt, a
 * cycle) is written by pino itself, loaded then. Loading pino (and the eleven
 * packages it requires) was about 35 ms of CPU at every daemon start, for lines
 * that all take the first way unless the daemon crashes.
 */
import { createRequire } from "node:module";
import type * as pinoModule from "pino";
import { DEFAULT_LOG_THRESHOLD, type LogLevel, type LogThreshold } from "./log-level.js";
import { prettyLine, type PrettyOptions } from "./pretty-line.js";

export type { LogLevel, LogThreshold };

/** The call shape shared by the daemon, the runtime, the HTTP layer, workers and MCP. */
export type Logger = (level: LogLevel, msg: string, fields?: Record<string, unknown>) => void;

/** Where lines go: anything with a synchronous `write`, such as process.stderr. */
export interface LogStream {
  write(line: string): unknown;
  isTTY?: boolean;
}

export interface LoggerOptions {
  /** Lines below this level are dropped. Default info. */
  level?: LogThreshold;
  /** Default process.stderr. */
  stream?: LogStream;
  /** Readable lines instead of JSON. Default: when the stream is a terminal. */
  pretty?: boolean;
  /** Colours in readable lines. Default: unless NO_COLOR is set. */
  color?: boolean;
  /**
   * Rewrites each finished line before it is written, e.g. to blank known
   * secret values. Runs on JSON, before a readable line is made from it.
   */
  redact?: (line: string) => string;
}

/** A logger that drops everything (tests, embedded use). */
export const silentLogger: Logger = () => undefined;

export function createLogger(options: LoggerOptions = {}): Logger {
  const stream = options.stream ?? process.stderr;
  const pretty = options.pretty ?? stream.isTTY === true;
  const prettyOptions: PrettyOptions = { color: options.color ?? (pretty && process.env.NO_COLOR === undefined) };
  const destination = pretty ? { write: (line: string) => stream.write(prettyLine(line, prettyOptions)) } : stream;
  const threshold = LEVEL_VALUES[options.level ?? DEFAULT_LOG_THRESHOLD];
  const redact = options.redact;
  let viaPino: Logger | undefined;
  return (level, msg, fields) => {
    if (LEVEL_VALUES[level] < threshold) return;
    const line = jsonLine(level, msg, fields);
    if (line === undefined) (viaPino ??= pinoLogger(options, destination))(level, msg, fields);
    else destination.write(redact ? redact(line) : line);
  };
}

/** pino's numbers for the levels; silent is above them all. */
const LEVEL_VALUES: Record<LogThreshold, number> = { trace: 10, debug: 20, info: 30, warn: 40, error: 50, fatal: 60, silent: Infinity };

/**
 * The line pino writes for this call (lib/tools.js, asJson, with the options pinoLogger gives it); undefined when
 * pino would write it otherwise: an `err` field (its error serializer) or a value JSON.stringify throws on.
 */
function jsonLine(level: LogLevel, msg: string, fields: Record<string, unknown> | undefined): string | undefined {
  let props = "";
  for (const key in fields) {
    const value = fields[key];
    if (!Object.prototype.hasOwnProperty.call(fields, key) || value === undefined || typeof value === "function") continue;
    if (key === "err") return undefined;
    let json: string | undefined;
    if (typeof value === "number") json = Number.isFinite(value) ? String(value) : "null";
    else if (typeof value === "boolean") json = String(value);
    else {
      try {
        json = JSON.stringify(value);
      } catch {
        return undefined;
      }
    }
    if (json !== undefined) props += `,${JSON.stringify(key)}:${json}`;
  }
  return `{"level":"${level}","time":"${new Date().toISOString()}","pid":${process.pid}${props},"msg":${JSON.stringify(msg)}}\n`;
}

/** pino itself, for the lines jsonLine leaves to it. */
function pinoLogger(options: LoggerOptions, destination: LogStream): Logger {
  const { pino } = createRequire(import.meta.url)("pino") as typeof pinoModule;
  const logger = pino(
    {
      level: options.level ?? DEFAULT_LOG_THRESHOLD,
      // Level names and ISO times read better than pino's numbers for people and for grep.
      formatters: { level: (label) => ({ level: label }) },
      timestamp: pino.stdTimeFunctions.isoTime,
      base: { pid: process.pid },
      ...(options.redact ? { hooks: { streamWrite: options.redact } } : {}),
    },
    destination,
  );
  return (level, msg, fields) => {
    if (fields === undefined) logger[level](msg);
    else logger[level](fields, msg);
  };
}
