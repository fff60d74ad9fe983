export { WardrikClient } from "./client.js";
export type { ClientOptions, FollowOptions } from "./client.js";
export { Wardrik } from "./wardrik.js";
export type { WardrikOptions } from "./wardrik.js";
export type { ToolContext, ToolDefinition, ToolInput } from "./tool.js";
export { DEFAULT_IDEMPOTENCY_DIR, FileIdempotencyStore, MemoryIdempotencyStore, remember, withIdempotency } from "./idempotency.js";
export type { IdempotencyRecord, IdempotencyStore, Remember } from "./idempotency.js";
