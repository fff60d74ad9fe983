import type { EventBus } from "../events/event-bus.js";
import type { Logger } from "../log/logger.js";
import type { PostgresDb } from "../store/postgres-db.js";
import type { Unsubscribe } from "../store/postgres-listener.js";

const CHANNEL = "wardrik_events";
/** Agents named per notification: PostgreSQL's payload holds 8000 bytes. */
const PER_NOTICE = 200;
const BATCH_MS = 2;

/**
 * Followers on any node see the events of agents driven elsewhere. Each node
 * tells the others, a few milliseconds after its commits and in one NOTIFY
 * for many, which agents have new events; a node that hears it wakes its
 * followers of those agents, which read the events from the database (the
 * record is there already). A notice lost in a crash only delays a follower
 * until its next look (they also look now and then on their own).
 */
export class EventRelay {
  private readonly dirty = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private unsubscribe: (() => void) | undefined;
  private unlisten: Unsubscribe | undefined;

  constructor(
    private readonly db: PostgresDb,
    private readonly bus: EventBus,
    private readonly node: string,
    private readonly log: Logger,
  ) {}

  async start(): Promise<void> {
    this.unsubscribe = this.bus.subscribe("*", (e) => {
      this.dirty.add(e.agent);
      this.timer ??= setTimeout(() => void this.send(), BATCH_MS);
    });
    this.unlisten = await this.db.listen(CHANNEL, (payload) => {
      const bar = payload.indexOf("|");
      if (bar < 0 || payload.slice(0, bar) === this.node) return;
      for (const id of payload.slice(bar + 1).split(",")) if (id) this.bus.poke(id);
    });
  }

  private async send(): Promise<void> {
    this.timer = undefined;
    const ids = [...this.dirty];
    this.dirty.clear();
    try {
      for (let i = 0; i < ids.length; i += PER_NOTICE) {
        const payload = `${this.node}|${ids.slice(i, i + PER_NOTICE).join(",")}`;
        // One autocommit statement: an explicit transaction around it cost two more round trips.
        await this.db.notify(this.db, CHANNEL, payload);
      }
    } catch (err) {
      this.log("warn", "telling other nodes about new events failed", { err: String(err) });
    }
  }

  async close(): Promise<void> {
    this.unsubscribe?.();
    clearTimeout(this.timer);
    await this.unlisten?.();
  }
}
