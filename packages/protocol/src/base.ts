/**
 * `@wardrik/protocol/base`: what the protocol says without its zod schemas
 * (errors, IDs, event types and their typed views, failure codes, safe text,
 * trace context). Loading it costs no zod: the CLI imports this, so a command
 * such as `wardrik ls` starts without building a schema it never checks.
 * Everything here is also exported by the package's main entry.
 */
export { ERROR_CODES, PROBLEM_CONTENT_TYPE, WardrikError } from "./errors.js";
export type { ErrorCode, ProblemDocument } from "./errors.js";
export { ID_PREFIXES, NAME_PATTERN, isId, isValidName } from "./ids.js";
export type { IdKind } from "./ids.js";
export { EVENT_TYPES, EVENT_TYPE_PREFIX, TURN_END_TYPES, isEventOf, shortType, typeMatches, typedEvent } from "./events.js";
export type { EventDataMap, EventType, Failure, ShortTypedEvent, TypedEvent, WardrikCloudEvent } from "./events.js";
export { FAILURE_CODES, isRetryableFailure } from "./failure-codes.js";
export type { FailureCode } from "./failure-codes.js";
export { describeUnsafeCharacter, findUnsafeCharacter } from "./safe-text.js";
export type { UnsafeCharacter } from "./safe-text.js";
export { formatTraceParent, parseTraceParent } from "./trace-context.js";
export type { TraceParent } from "./trace-context.js";
export { LOST_ANSWER } from "./lost-answer.js";
