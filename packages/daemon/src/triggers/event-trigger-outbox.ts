import type { StoredEvent } from "../events/event-bus.js";
import type { IdGenerator } from "../ids.js";
import type { Tx } from "../store/db.js";
import type { NewFiring, TriggerFiringsTable } from "../store/trigger-firings.js";
import { messageText } from "./trigger-firer.js";
import type { TriggerIndex } from "./trigger-index.js";

/**
 * Event triggers, durable and once only: inside the transaction that writes
 * an event, every event trigger it fires gets a pending firing keyed by
 * (trigger, source event ID), in one INSERT; the sweeper queues their
 * messages after the commit. No event trigger, no statement.
 */
export class EventTriggerOutbox {
  /** Set when firings were written since the sweeper was last kicked. */
  written = false;

  constructor(
    private readonly index: () => TriggerIndex,
    private readonly firings: TriggerFiringsTable,
    private readonly ids: IdGenerator,
  ) {}

  readonly onEventsWritten = async (tx: Tx, events: readonly StoredEvent[], now: string): Promise<void> => {
    const index = this.index();
    if (!index.hasEventTriggers) return;
    const rows: NewFiring[] = [];
    for (const e of events) {
      for (const t of index.watching(e)) {
        const { agent: agentId, org: _org, ...cloud } = e;
        const data = { ...cloud, agent: index.nameOf(agentId) ?? agentId, agent_id: agentId };
        rows.push({
          id: this.ids.next("firing"),
          org: t.org,
          agentId: t.agentId,
          triggerKey: t.key,
          fireKey: e.id,
          conversation: t.conversation,
          text: messageText(t, data),
        });
      }
    }
    if (rows.length === 0) return;
    await this.firings.insertPending(tx, rows, now);
    this.written = true;
  };
}
