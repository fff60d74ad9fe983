export { WardrikClient, isNoAnswer, readSse, NoAnswerError } from "./client-entry.js";
export type {
  CallActionAnswer,
  ClientOptions,
  EventQuery,
  FollowOptions,
  RequestOptions,
  SseMessage,
  StreamOptions,
  Transport,
  TransportAnswer,
  TransportRequest,
} from "./client-entry.js";
export { Wardrik } from "./wardrik.js";
export type { WardrikOptions } from "./wardrik.js";
export type { ReconnectInfo } from "./connection-report.js";
export { defineTool } from "./tool.js";
export type { ToolContext, ToolDefinition, ToolInput } from "./tool.js";
export { invokeTool } from "./invoke-tool.js";
export type { ToolOutcome } from "./invoke-tool.js";
export { DEFAULT_IDEMPOTENCY_DIR, FileIdempotencyStore, MemoryIdempotencyStore, remember, withIdempotency } from "./idempotency.js";
export type { IdempotencyRecord, IdempotencyStore, Remember } from "./idempotency.js";
export { MemoryFinishedCalls } from "./finished-calls.js";
export type { FinishedCallLimits, FinishedCallRecord, FinishedCallStore } from "./finished-calls.js";
export { DEFAULT_FINISHED_CALLS_FILE, FileFinishedCalls } from "./file-finished-calls.js";
export type { FileFinishedCallsOptions } from "./file-finished-calls.js";
