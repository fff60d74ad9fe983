// The zod-free part (errors, IDs, event types, ...) is also its own entry, `@wardrik/protocol/base`.
export {
  ERROR_CODES,
  EVENT_TYPES,
  EVENT_TYPE_PREFIX,
  FAILURE_CODES,
  ID_PREFIXES,
  LOST_ANSWER,
  NAME_PATTERN,
  PROBLEM_CONTENT_TYPE,
  TURN_END_TYPES,
  WardrikError,
  describeUnsafeCharacter,
  findUnsafeCharacter,
  formatTraceParent,
  isEventOf,
  isId,
  isRetryableFailure,
  isValidName,
  parseTraceParent,
  shortType,
  typeMatches,
  typedEvent,
} from "./base.js";
export type {
  ErrorCode,
  EventDataMap,
  EventType,
  Failure,
  FailureCode,
  IdKind,
  ProblemDocument,
  ShortTypedEvent,
  TraceParent,
  TypedEvent,
  UnsafeCharacter,
  WardrikCloudEvent,
} from "./base.js";
export { DEFAULT_JSON_DEPTH, parseJsonWithin, tooDeep, tooDeepAt, valueTooDeep } from "./bounded-json.js";
export type { JsonLimits } from "./bounded-json.js";
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
  AnswerBody,
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
  TriggerView,
} from "./http.js";
export { TurnList, TurnListQuery, TurnStatus, TurnSummary, TurnView } from "./turns.js";
export { AgentTools, ToolPatternProblem } from "./agent-tools.js";
export { describeSchemaErrors, schemaDraftOf } from "./schema-problems.js";
export { isCallMessage } from "./call-message.js";
export type { SchemaDraftName, SchemaErrorUnit } from "./schema-problems.js";
export {
  AbortReason,
  DaemonAbort,
  DaemonCall,
  DaemonDraining,
  DaemonError,
  DaemonMessage,
  DaemonPing,
  DaemonRecall,
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
  WorkerRecalled,
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
export type { DeltaFrame, ModelRetry } from "./delta.js";
export { NodeList, NodeView } from "./nodes.js";
export { ForkBody, ForkResult, JudgeVerdict, ReplayBody, ReplayReport, ReplaySource, ReplayTurn } from "./time-machine.js";
