import { randomUUID } from "node:crypto";
import { WardrikError } from "@wardrik/protocol";
import type { Clock, IdGenerator } from "../ids.js";
import type { Logger } from "../log/logger.js";
import type { Runtime } from "../runtime/runtime.js";
import type { Store } from "../store/store.js";
import type { FiringRow, TriggerFiringsTable } from "../store/trigger-firings.js";
import { FiringTaken, type FiringMarks } from "./firing-marks.js";
import { renderMessage } from "./render-message.js";
import type { IndexedTrigger } from "./trigger-index.js";

/** How long a node holds a firing it is queueing; after that another node may queue it. */
export const FIRING_LEASE_MS = 30_000;
/** A firing whose message could not be queued for a passing reason is tried again after this. */
const RETRY_MS = 5_000;

export type QueueResult = { queued: true; message: string } | { queued: false; reason: "taken" | "retry" | "failed"; error?: string };

/** A firing as `queue` needs it: a new one, or one claimed from the table. */
export interface ClaimedFiring {
  id: string;
  agentId: string;
  conversation: string;
  text: string;
}

/**
 * Fires triggers: a firing is a row keyed (agent, trigger, fire key), so it
 * happens once whichever daemon gets there first; its message is queued
 * through `runtime.enqueue` (which wakes an asleep agent), and the row turns
 * queued in that message's commit (see FiringMarks).
 */
export class TriggerFirer {
  readonly claim = randomUUID();
  runtime: Runtime | undefined;

  constructor(
    private readonly store: () => Store,
    private readonly firings: TriggerFiringsTable,
    private readonly marks: FiringMarks,
    private readonly ids: IdGenerator,
    private readonly clock: Clock,
    private readonly log: Logger,
  ) {}

  /** Fires `t` for `fireKey` unless it fired for that key before; the existing firing is returned then. */
  async fireNew(t: IndexedTrigger, fireKey: string, data: unknown): Promise<{ result: QueueResult; existing?: FiringRow }> {
    const now = this.clock.now();
    const text = messageText(t, data);
    const firing: ClaimedFiring = { id: this.ids.next("firing"), agentId: t.agentId, conversation: t.conversation, text };
    const row = { ...firing, org: t.org, triggerKey: t.key, fireKey };
    if (!(await this.firings.claimNew(row, this.claim, now.getTime() + FIRING_LEASE_MS, now.toISOString()))) {
      const existing = await this.firings.find(t.agentId, t.key, fireKey);
      return { result: { queued: false, reason: "taken" }, ...(existing ? { existing } : {}) };
    }
    return { result: await this.queue(firing) };
  }

  /** Queues the message of a firing this node has claimed. */
  async queue(f: ClaimedFiring): Promise<QueueResult> {
    const store = this.store();
    const runtime = this.runtime;
    const agent = await store.agents.get(f.agentId);
    if (!runtime || !agent || agent.status === "unreadable") {
      if (!runtime) {
        await this.firings.release(f.id, this.claim);
        return { queued: false, reason: "retry", error: "the daemon is starting" };
      }
      const error = agent ? `agent ${agent.name} is unreadable: ${agent.reason ?? "unknown reason"}` : "the agent no longer exists";
      await this.firings.fail(f.id, this.claim, error, this.clock.now().toISOString());
      return { queued: false, reason: "failed", error };
    }
    const mark = this.marks.arm(agent, f.conversation, f.text, { id: f.id, claim: this.claim });
    try {
      const q = await runtime.enqueue(agent, f.conversation, f.text);
      // Another message of the same text took the mark (or the text was redacted): record it now.
      if (mark.taken !== q.message) await this.firings.markQueuedLate(f.id, this.claim, q.message, this.clock.now().toISOString());
      return { queued: true, message: q.message };
    } catch (err) {
      if (err instanceof FiringTaken) return { queued: false, reason: "taken" };
      const error = err instanceof Error ? err.message : String(err);
      if (WardrikError.isInstance(err) && !err.retryable && (err.code === "unreadable" || err.code === "not_found")) {
        await this.firings.fail(f.id, this.claim, error, this.clock.now().toISOString());
        return { queued: false, reason: "failed", error };
      }
      this.log("warn", "a trigger's message could not be queued; it is tried again", { firing: f.id, agent: agent.name, err: error });
      await this.firings.release(f.id, this.claim, this.clock.now().getTime() + RETRY_MS);
      return { queued: false, reason: "retry", error };
    } finally {
      this.marks.disarm(agent, f.conversation, f.text, mark);
    }
  }
}

/** The message a firing queues: the template over the trigger's data, never empty. */
export function messageText(t: IndexedTrigger, data: unknown): string {
  const text = renderMessage(t.message, data);
  return text.trim() === "" ? `(trigger ${t.key} fired; its message template gave an empty text)` : text;
}
