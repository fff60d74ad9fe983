import type { StoredEvent } from "../events/event-bus.js";
import type { Clock, IdGenerator } from "../ids.js";
import { agentNamesIn } from "../store/agent-names.js";
import type { Tx } from "../store/db.js";
import type { DeliveriesTable, NewDelivery } from "../store/deliveries.js";
import { wants, type Subscriber } from "./subscribers.js";

/**
 * The outbox half of webhooks: runs inside every transaction that wrote
 * events (the Store's `onEventsWritten`) and adds one delivery row per
 * (event, subscriber that wants it), in one INSERT; a transaction whose
 * events no subscriber wants costs no statement at all. Subscribers see
 * config.yaml's org only: another org's events never leave through them.
 */
export class WebhookOutbox {
  private readonly names = new Map<string, string>();
  private readonly byName: boolean;
  /** Set when a queue got a new head since the sender last looked; the sender is kicked after the commit. */
  written = false;

  constructor(
    private readonly org: string,
    private readonly subscribers: readonly Subscriber[],
    private readonly table: DeliveriesTable,
    private readonly ids: IdGenerator,
    private readonly clock: Clock,
  ) {
    this.byName = subscribers.some((s) => s.agents !== undefined);
  }

  get active(): boolean {
    return this.subscribers.length > 0;
  }

  readonly onEventsWritten = async (tx: Tx, events: readonly StoredEvent[]): Promise<void> => {
    if (this.subscribers.length === 0) return;
    const mine = events.filter((e) => e.org === this.org);
    if (mine.length === 0) return;
    if (this.byName) {
      const unknown = [...new Set(mine.map((e) => e.agent).filter((id) => !this.names.has(id)))];
      for (const [id, name] of await agentNamesIn(tx, unknown)) this.names.set(id, name);
    }
    const rows: NewDelivery[] = [];
    for (const e of mine) {
      for (const s of this.subscribers) {
        if (!wants(s, e.type, () => this.names.get(e.agent))) continue;
        rows.push({
          id: this.ids.next("delivery"),
          org: e.org,
          agentId: e.agent,
          eventSeq: e.seq,
          eventId: e.id,
          eventType: e.type,
          subscriber: s.key,
        });
      }
    }
    if (rows.length === 0) return;
    const now = this.clock.now();
    // Rows behind a head are taken by the sender that finishes the head (in that commit): only a new head needs a look.
    if ((await this.table.insert(tx, rows, now.toISOString(), now.getTime())) > 0) this.written = true;
  };
}
