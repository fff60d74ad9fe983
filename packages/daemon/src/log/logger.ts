/**
 * The daemon's one logger: a function with the call shape every part already
 * uses, backed by pino. JSON lines when the output is not a terminal (so a log
 * shipper can read every line), short readable lines when it is.
 */
import { pino } from "pino";
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
