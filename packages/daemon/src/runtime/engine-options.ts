import type { Logger } from "../log/logger.js";
import type { FairShare } from "./fair-share.js";
import type { OrgTurnSlots } from "./org-turn-slots.js";
import type { Telemetry } from "./telemetry.js";

/** Settings of the engine that drives turns; the daemon fills them from config.yaml. */
export interface EngineOptions {
  /** How long a tool call may run (config `tool_timeout`, default 60 s). */
  toolTimeoutMs: number;
  /**
   * config.yaml `worker_grace`: after a start or a takeover, how long a call
   * to a worker tool nobody serves yet waits for workers to reconnect, and how
   * long the workers are asked about an interrupted call before a person is
   * (default 30 s).
   */
  reconnectGraceMs: number;
  /** How deep a model's tool arguments and a tool's result may nest (config.yaml `limits.json_depth`; default 64). */
  jsonDepth: number;
  /** Test hook: base of the model retry backoff. */
  modelBackoffMs?: number;
  log: Logger;
  /** Traces of turns, model calls and tool calls (default: none). */
  telemetry: Telemetry;
  /** Each org's places for running turns on this node (config `limits.org_running_turns`). */
  turnSlots: OrgTurnSlots;
  /** The event loop shared between orgs: each step of a turn waits its org's turn behind other orgs' backlogs (the HTTP layer shares it). */
  fairShare: FairShare;
}

/** Why a running turn was interrupted: its AbortSignal's reason. */
export class TurnStop extends Error {
  constructor(readonly why: "cancelled" | "timeout" | "shutdown" | "budget") {
    super(`turn ${why}`);
  }
}

/** A write for a turn that is no longer in the state the writer expected (cancelled, ended elsewhere). */
export class StaleTurn extends Error {}
