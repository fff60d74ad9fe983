import { z } from "zod";

/**
 * The worker protocol: a worker process (the SDK) holds a WebSocket to the
 * daemon at `WORKER_PATH`, authenticated with `Authorization: Bearer TOKEN`.
 * Every text frame carries one JSON message, or a JSON array of messages when
 * the sender batches (both sides accept both). The first message of a
 * connection is the worker's `hello`; the daemon answers `welcome`.
 *
 * Bump `WORKER_PROTOCOL_VERSION` on any change an older peer would misread.
 */
export const WORKER_PROTOCOL_VERSION = 1;
export const WORKER_PATH = "/v1/workers";

/** WebSocket close codes the daemon uses; the SDK decides from them whether to reconnect. */
export const WORKER_CLOSE_CODES = {
  /** A clean close (`close()` on either side). */
  normal: 1000,
  /** The daemon is shutting down; reconnect. */
  goingAway: 1001,
  /** Malformed message or a protocol violation; the worker has a bug, reconnecting repeats it. */
  policyViolation: 1008,
  /** The worker speaks a protocol version the daemon does not; do not reconnect. */
  unsupportedProtocol: 4000,
} as const;

export const WORKER_ERROR_CODES = [
  "invalid_message",
  "unsupported_protocol",
  "hello_required",
  "message_too_large",
  "unauthorized",
  "internal",
] as const;
export type WorkerErrorCode = (typeof WORKER_ERROR_CODES)[number];

const Id = z.string().min(1).max(200);
const Attempt = z.number().int().min(1);

/** A tool as the daemon lists it to the model. The name is checked by the daemon so a bad one is reported, not fatal. */
export const WorkerToolDescriptor = z.object({
  name: z.string().max(200),
  description: z.string(),
  title: z.string().optional(),
  /** JSON Schema of the input side of the tool's arguments. */
  inputSchema: z.record(z.string(), z.unknown()),
  readOnly: z.boolean(),
  idempotent: z.boolean(),
});
export type WorkerToolDescriptor = z.infer<typeof WorkerToolDescriptor>;

// Worker -> daemon.

export const WorkerHello = z.object({
  type: z.literal("hello"),
  protocol: z.number().int(),
  /** A display name (defaults to host and pid). */
  name: z.string().max(200),
  /** Random per SDK instance; stays the same across reconnects, so logs can tie connections together. */
  instance: z.string().max(200),
  sdk: z.string().max(100),
});
export type WorkerHello = z.infer<typeof WorkerHello>;

/** Replaces the set of tools this connection serves. */
export const WorkerRegister = z.object({
  type: z.literal("register"),
  tools: z.array(WorkerToolDescriptor).max(1000),
});
export type WorkerRegister = z.infer<typeof WorkerRegister>;

export const WorkerResultOk = z.object({
  type: z.literal("result"),
  callId: Id,
  attempt: Attempt,
  ok: z.literal(true),
  output: z.unknown(),
});
export const WorkerResultError = z.object({
  type: z.literal("result"),
  callId: Id,
  attempt: Attempt,
  ok: z.literal(false),
  error: z.string(),
});
export const WorkerResult = z.discriminatedUnion("ok", [WorkerResultOk, WorkerResultError]);
export type WorkerResult = z.infer<typeof WorkerResult>;

export const WorkerCost = z.object({
  type: z.literal("cost"),
  callId: Id,
  /** US dollars; each message adds to the call's cost. */
  usd: z.number().finite().nonnegative(),
});
export type WorkerCost = z.infer<typeof WorkerCost>;

export const WorkerPong = z.object({ type: z.literal("pong"), ts: z.number().optional() });
export type WorkerPong = z.infer<typeof WorkerPong>;

/** The worker is closing: send it no new calls; it finishes the ones it has. The daemon answers `draining`. */
export const WorkerDrain = z.object({ type: z.literal("drain") });
export type WorkerDrain = z.infer<typeof WorkerDrain>;

const RecalledBase = { type: z.literal("recalled"), ask: Id, callId: Id };

/**
 * The answer to `recall`. `finished`: this worker ran the key to its end
 * (in this process, or in an earlier one that shared its finished-calls
 * store); the result is the one it gave, and `attempt` the attempt that ran.
 * `running`: it runs the key now, as `attempt`; its `result` follows as usual.
 * `unknown`: it neither runs nor remembers the key.
 */
export const WorkerRecalledFinishedOk = z.object({
  ...RecalledBase,
  state: z.literal("finished"),
  attempt: Attempt,
  ok: z.literal(true),
  output: z.unknown(),
});
export const WorkerRecalledFinishedError = z.object({
  ...RecalledBase,
  state: z.literal("finished"),
  attempt: Attempt,
  ok: z.literal(false),
  error: z.string(),
});
export const WorkerRecalledRunning = z.object({ ...RecalledBase, state: z.literal("running"), attempt: Attempt });
export const WorkerRecalledUnknown = z.object({ ...RecalledBase, state: z.literal("unknown") });
export const WorkerRecalled = z.discriminatedUnion("state", [
  z.discriminatedUnion("ok", [WorkerRecalledFinishedOk, WorkerRecalledFinishedError]),
  WorkerRecalledRunning,
  WorkerRecalledUnknown,
]);
export type WorkerRecalled = z.infer<typeof WorkerRecalled>;

export const WorkerMessage = z.discriminatedUnion("type", [
  WorkerHello,
  WorkerRegister,
  WorkerResult,
  WorkerCost,
  WorkerPong,
  WorkerDrain,
  WorkerRecalled,
]);
export type WorkerMessage = z.infer<typeof WorkerMessage>;

// Daemon -> worker.

export const DaemonWelcome = z.object({
  type: z.literal("welcome"),
  protocol: z.number().int(),
  workerId: z.string(),
  org: z.string(),
  /** The daemon pings this often; a worker that hears nothing for a few intervals can assume the link is dead. */
  heartbeatMs: z.number().int().positive(),
  /** Largest serialised result the daemon accepts, in bytes. */
  maxResultBytes: z.number().int().positive(),
});
export type DaemonWelcome = z.infer<typeof DaemonWelcome>;

export const DaemonRegistered = z.object({
  type: z.literal("registered"),
  accepted: z.array(z.string()),
  skipped: z.array(z.object({ name: z.string(), reason: z.string() })),
});
export type DaemonRegistered = z.infer<typeof DaemonRegistered>;

export const DaemonCall = z.object({
  type: z.literal("call"),
  callId: Id,
  /** 1 on the first dispatch; higher when the call is re-sent after its worker was lost. */
  attempt: Attempt,
  tool: z.string(),
  args: z.unknown(),
  ctx: z.object({
    agent: z.string(),
    run: z.string(),
    idempotencyKey: z.string(),
    /** Time left for this attempt. */
    timeoutMs: z.number().int().nonnegative(),
    /**
     * W3C Trace Context of the daemon's `execute_tool` span for this call, when
     * the daemon exports traces. Optional both ways: an older SDK drops it, an
     * older daemon never sends it.
     */
    traceparent: z.string().max(512).optional(),
  }),
});
export type DaemonCall = z.infer<typeof DaemonCall>;

export const AbortReason = z.enum(["killed", "cancelled", "timeout"]);
export type AbortReason = z.infer<typeof AbortReason>;

export const DaemonAbort = z.object({ type: z.literal("abort"), callId: Id, reason: AbortReason });
export type DaemonAbort = z.infer<typeof DaemonAbort>;

export const DaemonError = z.object({
  type: z.literal("error"),
  code: z.enum(WORKER_ERROR_CODES),
  message: z.string(),
});
export type DaemonError = z.infer<typeof DaemonError>;

export const DaemonPing = z.object({ type: z.literal("ping"), ts: z.number().optional() });
export type DaemonPing = z.infer<typeof DaemonPing>;

/** Answer to `drain`: no new calls will arrive on this connection. */
export const DaemonDraining = z.object({ type: z.literal("draining") });
export type DaemonDraining = z.infer<typeof DaemonDraining>;

/**
 * Does this worker know the call with this idempotency key? The daemon asks
 * before it hands a call whose answer was lost to a person, and before an
 * approved re-run of such a call. The worker answers `recalled` with the same
 * `ask`. An SDK older than this message ignores it; the daemon takes its
 * silence for "unknown".
 */
export const DaemonRecall = z.object({
  type: z.literal("recall"),
  ask: Id,
  callId: Id,
  idempotencyKey: z.string().max(200),
});
export type DaemonRecall = z.infer<typeof DaemonRecall>;

export const DaemonMessage = z.discriminatedUnion("type", [
  DaemonWelcome,
  DaemonRegistered,
  DaemonCall,
  DaemonAbort,
  DaemonError,
  DaemonPing,
  DaemonDraining,
  DaemonRecall,
]);
export type DaemonMessage = z.infer<typeof DaemonMessage>;
