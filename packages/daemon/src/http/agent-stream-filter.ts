import { typeMatches } from "@wardrik/protocol";
import type { StoredEvent } from "../events/event-bus.js";

const TURN_STARTED = "dev.wardrik.turn.started";
const MESSAGE_QUEUED = "dev.wardrik.message.queued";
const MESSAGES_DROPPED = "dev.wardrik.messages.dropped";

export interface AgentStreamFilterOptions {
  /** Type patterns (turn.completed, call.*); undefined: every type. */
  types?: readonly string[] | undefined;
  /** One turn's ID. */
  run?: string | undefined;
  /** One conversation's key. */
  conversation?: string | undefined;
}

/**
 * What one agent stream shows, so that a client following its own turn is
 * sent that turn and nothing else: type patterns, one turn (`run`), one
 * conversation. An event names its turn, not its conversation: the
 * conversation's turns are learnt from their `turn.started` as the bus
 * brings each event (before any live text of the turn), from the store's
 * reads (which pick the conversation's turns in SQL) and, at the start, from
 * the conversation's open turns. Events of no turn pass when they are the
 * conversation's messages queued or dropped (a drop without a conversation
 * is every conversation's).
 */
export class AgentStreamFilter {
  private readonly runs = new Set<string>();

  constructor(private readonly opts: AgentStreamFilterOptions) {}

  /** Whether the stream narrows events at all beyond their type. */
  get narrow(): boolean {
    return this.opts.run !== undefined || this.opts.conversation !== undefined;
  }

  /** Turns known to be the conversation's (open ones at the start, those a store read returned). */
  knowRuns(runs: Iterable<string>): void {
    if (this.opts.conversation !== undefined) for (const r of runs) this.runs.add(r);
  }

  /** Sees every event of the agent, in the order the bus brings them, shown or not: a turn of the conversation starting. */
  learn(e: StoredEvent): void {
    if (
      this.opts.conversation !== undefined &&
      e.type === TURN_STARTED &&
      e.run !== undefined &&
      e.data.conversation === this.opts.conversation
    )
      this.runs.add(e.run);
  }

  shows(e: StoredEvent): boolean {
    const types = this.opts.types;
    if (types && !types.some((t) => typeMatches(t, e.type))) return false;
    if (this.opts.run !== undefined && e.run !== this.opts.run) return false;
    const conversation = this.opts.conversation;
    if (conversation === undefined) return true;
    this.learn(e);
    if (e.run !== undefined) return this.runs.has(e.run);
    if (e.type === MESSAGE_QUEUED) return e.data.conversation === conversation;
    if (e.type === MESSAGES_DROPPED) return e.data.conversation === undefined || e.data.conversation === conversation;
    return false;
  }

  /** Whether the live text of a turn goes out on the stream. */
  showsText(run: string): boolean {
    if (this.opts.run !== undefined && run !== this.opts.run) return false;
    return this.opts.conversation === undefined || this.runs.has(run);
  }
}
