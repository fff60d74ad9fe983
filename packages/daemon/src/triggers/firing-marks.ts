import { EVENT_TYPE_PREFIX } from "@wardrik/protocol";
import type { StoredEvent } from "../events/event-bus.js";
import type { Tx } from "../store/db.js";
import type { TriggerFiringsTable } from "../store/trigger-firings.js";

/** A firing whose message is being queued: the firing is marked queued by the transaction that queues the message. */
export interface FiringMark {
  firing: { id: string; claim: string };
  /** The message whose transaction took this mark (normally the firing's own). */
  taken?: string;
}

/** The claim on a firing was lost (it lapsed and another daemon fired it): the message must not be queued twice. */
export class FiringTaken extends Error {}

const QUEUED = EVENT_TYPE_PREFIX + "message.queued";

/**
 * Ties a trigger's firing to the transaction of the message it queues,
 * without changing how the runtime queues messages: before calling
 * `runtime.enqueue`, the firer arms a mark for (agent, conversation, text);
 * inside the enqueue's transaction (the Store's `onEventsWritten`) the
 * `message.queued` event that fits takes the mark and turns the firing
 * queued under its claim, or rolls the transaction back when the claim was
 * lost. With nothing armed (the normal case) it costs one size check.
 */
export class FiringMarks {
  private readonly armed = new Map<string, FiringMark[]>();

  constructor(
    private readonly firings: TriggerFiringsTable,
    /** The events carry text redacted for their org: marks are keyed the same way. */
    private readonly redact: (text: string, org: string) => string,
  ) {}

  arm(agent: { id: string; org: string }, conversation: string, text: string, firing: { id: string; claim: string }): FiringMark {
    const mark: FiringMark = { firing };
    const key = this.key(agent.id, conversation, this.redact(text, agent.org));
    const list = this.armed.get(key);
    if (list) list.push(mark);
    else this.armed.set(key, [mark]);
    return mark;
  }

  disarm(agent: { id: string; org: string }, conversation: string, text: string, mark: FiringMark): void {
    const key = this.key(agent.id, conversation, this.redact(text, agent.org));
    const list = (this.armed.get(key) ?? []).filter((m) => m !== mark);
    if (list.length > 0) this.armed.set(key, list);
    else this.armed.delete(key);
  }

  readonly onEventsWritten = async (tx: Tx, events: readonly StoredEvent[], now: string): Promise<void> => {
    if (this.armed.size === 0) return;
    for (const e of events) {
      if (e.type !== QUEUED) continue;
      const d = e.data as { message: string; conversation: string; text: string };
      const mark = this.armed.get(this.key(e.agent, d.conversation, d.text))?.find((m) => m.taken === undefined);
      if (!mark) continue;
      mark.taken = d.message;
      if (!(await this.firings.markQueued(tx, mark.firing.id, mark.firing.claim, d.message, now))) {
        throw new FiringTaken(`Firing ${mark.firing.id} was queued by another daemon.`);
      }
    }
  };

  private key(agentId: string, conversation: string, text: string): string {
    return `${agentId}\u0000${conversation}\u0000${text}`;
  }
}
