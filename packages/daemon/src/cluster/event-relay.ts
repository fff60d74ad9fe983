import type { EventBus } from "../events/event-bus.js";
import type { Logger } from "../log/logger.js";
import type { PostgresDb } from "../store/postgres-db.js";
import type { Unsubscribe } from "../store/postgres-listener.js";

const CHANNEL = "wardrik_events";
/** Agents named per notification: PostgreSQL's payload holds 8000 bytes. */
const PER_NOTICE = 200;
const BATCH_MS = 2;
/** How often a node says it is there (a notice naming no agent), so the others keep telling it about their events. */
const HELLO_MS = 20_000;
/** A node tells the others about its events while it heard from one of them this recently. */
const OTHERS_FOR_MS = 3 * HELLO_MS;
/** The hello of a node that starts (no agent ID has this form): the others answer with theirs. */
const STARTED = "!started";

/**
 * Followers on any node see the events of agents driven elsewhere. Each node
 * tells the others, a few milliseconds after its commits and in one NOTIFY
 * for many, which agents have new events; a node that hears it wakes its
 * followers of those agents, which read the events from the database (the
 * record is there already). A notice lost in a crash only delays a follower
 * until its next look (they also look now and then on their own).
 *
 * A daemon alone on its database (the usual PostgreSQL set-up) tells nobody:
 * every node says hello when it starts (the others answer with theirs) and
 * every HELLO_MS, and a node sends notices only while it has heard another
 * within OTHERS_FOR_MS. A node that joins is told from the moment its hello
 * arrives, and tells the others from the moment their answers arrive.
 */
export class EventRelay {
  private readonly dirty = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private hello: NodeJS.Timeout | undefined;
  private unsubscribe: (() => void) | undefined;
  private unlisten: Unsubscribe | undefined;
  /** Until when another node is known to listen. */
  private othersUntil = 0;

  constructor(
    private readonly db: PostgresDb,
    private readonly bus: EventBus,
    private readonly node: string,
    private readonly log: Logger,
  ) {}

  async start(): Promise<void> {
    this.unsubscribe = this.bus.subscribe("*", (e) => {
      if (Date.now() > this.othersUntil) return;
      this.dirty.add(e.agent);
      this.timer ??= setTimeout(() => void this.send(), BATCH_MS);
    });
    this.unlisten = await this.db.listen(CHANNEL, (payload) => {
      const bar = payload.indexOf("|");
      if (bar < 0 || payload.slice(0, bar) === this.node) return;
      this.othersUntil = Date.now() + OTHERS_FOR_MS;
      const rest = payload.slice(bar + 1);
      // A node that just started does not know about this one yet: it is told at once.
      if (rest === STARTED) return void this.notify(`${this.node}|`);
      for (const id of rest.split(",")) if (id) this.bus.poke(id);
    });
    await this.notify(`${this.node}|${STARTED}`);
    this.hello = setInterval(() => void this.notify(`${this.node}|`), HELLO_MS);
    this.hello.unref();
  }

  private async send(): Promise<void> {
    this.timer = undefined;
    const ids = [...this.dirty];
    this.dirty.clear();
    for (let i = 0; i < ids.length; i += PER_NOTICE) await this.notify(`${this.node}|${ids.slice(i, i + PER_NOTICE).join(",")}`);
  }

  private async notify(payload: string): Promise<void> {
    try {
      // One autocommit statement: an explicit transaction around it cost two more round trips.
      await this.db.notify(this.db, CHANNEL, payload);
    } catch (err) {
      this.log("warn", "telling other nodes about new events failed", { err: String(err) });
    }
  }

  async close(): Promise<void> {
    this.unsubscribe?.();
    clearTimeout(this.timer);
    clearInterval(this.hello);
    await this.unlisten?.();
  }
}
