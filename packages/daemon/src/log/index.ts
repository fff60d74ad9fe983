export { DEFAULT_LOG_THRESHOLD, LOG_LEVEL_ENV, LOG_THRESHOLDS, parseLogThreshold, resolveLogThreshold } from "./log-level.js";
export type { LogLevel, LogThreshold } from "./log-level.js";
export { createLogger, silentLogger } from "./logger.js";
export type { LogStream, Logger, LoggerOptions } from "./logger.js";
export { routeProcessOutput } from "./process-output.js";
