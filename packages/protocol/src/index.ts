export { ERROR_CODES, WardrikError } from "./errors.js";
export type { ErrorBody, ErrorCode } from "./errors.js";
export { ID_PREFIXES, NAME_PATTERN, isId, isValidName } from "./ids.js";
export type { IdKind } from "./ids.js";
export { EVENT_TYPES, EVENT_TYPE_PREFIX, TURN_END_TYPES, isEventOf, shortType, typeMatches, typedEvent } from "./events.js";
export type { EventDataMap, EventType, Failure, ShortTypedEvent, TypedEvent, WardrikCloudEvent } from "./events.js";
export { FAILURE_CODES, isRetryableFailure } from "./failure-codes.js";
export type { FailureCode } from "./failure-codes.js";
export {
  AgentDetail,
  AgentPage,
  AgentStatus,
  AgentSummary,
  CallActionResult,
  CancelResult,
  ClearResult,
  CloudEvent,
  ConversationKey,
  ConversationList,
  AgentTools,
  ApproveBody,
  PolicyView,
  CreateAgentBody,
  CreateTokenBody,
  CreatedToken,
  DenyBody,
  EmptyBody,
  ErrorResponse,
  EventPage,
  EventStreamHeaders,
  EventStreamQuery,
  EventsQuery,
  FilePath,
  Health,
  HistoryMessage,
  HistoryPage,
  HistoryQuery,
  ListAgentsQuery,
  Ok,
  PostMessageBody,
  PostMessageResult,
  ReloadResult,
  queryInteger,
  ScopeBody,
  SecretNames,
  SetSecretBody,
  StoredSecret,
  ToolPatternProblem,
  TriggerView,
} from "./http.js";
export { TurnList, TurnListQuery, TurnStatus, TurnSummary, TurnView } from "./turns.js";
export { describeUnsafeCharacter, findUnsafeCharacter } from "./safe-text.js";
export { describeSchemaErrors, schemaDraftOf } from "./schema-problems.js";
export type { SchemaDraftName, SchemaErrorUnit } from "./schema-problems.js";
export { formatTraceParent, parseTraceParent } from "./trace-context.js";
export type { TraceParent } from "./trace-context.js";
export type { UnsafeCharacter } from "./safe-text.js";
export {
  AbortReason,
  DaemonAbort,
  DaemonCall,
  DaemonDraining,
  DaemonError,
  DaemonMessage,
  DaemonPing,
  DaemonRegistered,
  DaemonWelcome,
  WORKER_CLOSE_CODES,
  WORKER_ERROR_CODES,
  WORKER_PATH,
  WORKER_PROTOCOL_VERSION,
  WorkerCost,
  WorkerDrain,
  WorkerHello,
  WorkerMessage,
  WorkerPong,
  WorkerRegister,
  WorkerResult,
  WorkerResultError,
  WorkerResultOk,
  WorkerToolDescriptor,
} from "./worker.js";
export type { WorkerErrorCode } from "./worker.js";
export { FeedEvent, FeedPage, FeedQuery, FeedStreamHeaders, FeedStreamQuery } from "./feed.js";
export { DeliveryAttempt, DeliveryPage, DeliveryQuery, DeliveryStatus, DeliveryView, HookAccepted } from "./events-io.js";
export { ConsoleLink, ConsoleSession, ConsoleSessionBody, WhoAmI } from "./console.js";
export { McpAuthState, McpLoginResult, McpLogoutResult, McpServerList, McpServersQuery, McpServerView } from "./mcp-servers.js";
export { CallTable } from "./call-table.js";
export { LOST_ANSWER } from "./lost-answer.js";
export type { DeltaFrame, ModelRetry } from "./delta.js";
export { NodeList, NodeView } from "./nodes.js";
