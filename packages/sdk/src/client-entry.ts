/**
 * `@wardrik/sdk/client`: the HTTP API client alone, with the SDK's reader of
 * server-sent events. Browser-safe: nothing here, or below it, imports a
 * node: module (the web console bundles it), and it loads no zod.
 */
export { WardrikClient } from "./client.js";
export type { CallActionAnswer, CallVerb, EventQuery, FollowOptions } from "./client.js";
export { isNoAnswer } from "./client-core.js";
export type { ClientOptions, RequestOptions, RetryListener, StreamOptions } from "./client-core.js";
export { readSse } from "./sse.js";
export type { SseMessage } from "./sse.js";
export { fetchTransport, isCutOff, NoAnswerError } from "./transport.js";
export type { Transport, TransportAnswer, TransportRequest } from "./transport.js";
