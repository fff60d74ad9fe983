import type { EventBus } from "../events/event-bus.js";
import type { Logger } from "../log/logger.js";
import type { PostgresDb } from "../store/postgres-db.js";
import type { Unsubscribe } from "../store/postgres-listener.js";
import { formatInterest, isInterest, OtherNodesInterest, parseInterest, type Interest } from "./follower-interest.js";

const CHANNEL = "wardrik_events";
/** Agents named per notification: PostgreSQL's payload holds 8000 bytes. */
const PER_NOTICE = 200;
/** A node that follows more agents than fit in one notice announces that it wants every agent's. */
const MAX_NAMED_INTEREST = PER_NOTICE;
const BATCH_MS = 2;
/** An event type pattern an announcement can carry. */
const TYPE_PATTERN = /^[A-Za-z0-9._-]+(\.\*)?$|^\*$/;
/** Room for type patterns in an announcement, beside up to MAX_NAMED_INTEREST agent IDs. */
const MAX_TYPES_TEXT = 1000;
/** How often a node says it is there (a notice naming no agent), so the others keep telling it about their events. */
const HELLO_MS = 20_000;
/** A node tells the others about its events while it heard from one of them this recently. */
const OTHERS_FOR_MS = 3 * HELLO_MS;
/** The hello of a node that starts (no agent ID has this form): the others answer with theirs. */
const STARTED = "!started";
/** A catch-up notice naming no agent: wake every follower (one that now follows every agent may have missed some). */
const EVERY_AGENT = "*";

/**
 * Followers on any node see the events of agents driven elsewhere. Each node
 * tells the others, a few milliseconds after its commits and in one NOTIFY
 * for many, which agents have new events; a node that hears it wakes its
 * followers of those agents, which read the events from the database (the
 * record is there already). A notice lost in a crash only delays a follower
 * until its next look (they also look now and then on their own); notices
 * missed while this node's LISTEN connection was down are made up for when
 * it is back (every follower here reads again, and the others re-announce).
 *
 * Only what someone follows is told: each node announces which agents its
 * followers want (every agent, some, or none) and of which event types
 * (every type, or the patterns of their type filters) when that changes and
 * with every hello, and a node names an agent in its notices only while
 * another node wants events of that agent and type. A node that learns of a
 * new want sends a catch-up notice for it at once, since its earlier events
 * were told to nobody.
 *
 * A daemon alone on its database (the usual PostgreSQL set-up) tells nobody:
 * every node says hello when it starts (the others answer with theirs) and
 * every HELLO_MS, and a node sends notices only while it has heard another
 * within OTHERS_FOR_MS. A node that joins is told from the moment its hello
 * arrives, and tells the others from the moment their answers arrive.
 *
 * Messages on the channel, each `NODE|` and then: `!started` (a node
 * starts), `+TYPES?AGENTS` (a hello with what its followers want, see
 * follower-interest.ts), `IDS` (agents with new events, or `*`: wake every
 * follower). Older releases: `?AGENTS` announced agents of every type, and
 * an empty rest was the hello of a node that announced nothing, which is
 * told about everything. The release before types takes `+...` for a notice
 * (a needless read) from a node that never announced, and tells it about
 * everything, unless it still remembers a narrower `?AGENTS` from that node
 * (the same name restarted on this release): then it keeps to that, and
 * followers there see its events at their own look (a second) until it is
 * upgraded too. Nothing is lost either way.
 */
export class EventRelay {
  private readonly dirty = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private hello: NodeJS.Timeout | undefined;
  private unsubscribe: (() => void) | undefined;
  private unlisten: Unsubscribe | undefined;
  /** Until when another node is known to listen. */
  private othersUntil = 0;
  private readonly others = new OtherNodesInterest(OTHERS_FOR_MS);
  private offInterest: (() => void) | undefined;
  private announceTimer: NodeJS.Timeout | undefined;
  /** The last announcement sent: a change of followers that leaves it the same is not sent again. */
  private announced: string | undefined;
  private announcing: Promise<void> = Promise.resolve();
  private closed = false;

  constructor(
    private readonly db: PostgresDb,
    private readonly bus: EventBus,
    private readonly node: string,
    private readonly log: Logger,
  ) {}

  async start(): Promise<void> {
    this.unsubscribe = this.bus.subscribe("*", (e) => {
      if (Date.now() > this.othersUntil || !this.others.wants(e.agent, e.type)) return;
      this.dirty.add(e.agent);
      this.timer ??= setTimeout(() => void this.send(), BATCH_MS);
    });
    this.unlisten = await this.db.listen(CHANNEL, (payload) => this.heard(payload), { onReconnect: () => void this.reconnected() });
    // Followers come and go in bursts (a console opening many streams): one announcement for a burst.
    this.offInterest = this.bus.onInterestChange(() => {
      this.announceTimer ??= setTimeout(() => {
        this.announceTimer = undefined;
        if (formatInterest(this.myInterest()) !== this.announced) void this.announce();
      }, BATCH_MS);
    });
    await this.notify(`${this.node}|${STARTED}`);
    await this.announce();
    this.hello = setInterval(() => void this.announce(), HELLO_MS);
    this.hello.unref();
  }

  private heard(payload: string): void {
    const bar = payload.indexOf("|");
    const from = payload.slice(0, bar);
    if (bar < 0 || from === this.node) return;
    this.othersUntil = Date.now() + OTHERS_FOR_MS;
    const rest = payload.slice(bar + 1);
    // A node that just started does not know about this one yet: it is told at once.
    if (rest === STARTED) return void this.announce();
    if (isInterest(rest)) {
      const added = this.others.set(from, parseInterest(rest));
      if (added.all) void this.notify(`${this.node}|${EVERY_AGENT}`);
      else if (added.agents.size > 0) void this.notifyAgents([...added.agents]);
      return;
    }
    this.others.heardFrom(from);
    if (rest === EVERY_AGENT) return this.bus.pokeAll();
    for (const id of rest.split(",")) if (id) this.bus.poke(id);
  }

  /**
   * The LISTEN connection was lost and is back: every notice and announcement
   * sent meanwhile is gone. This node's followers read again (they may have
   * missed events), and it says hello as a node that starts, so the others
   * answer with what their followers want now.
   */
  private async reconnected(): Promise<void> {
    if (this.closed) return;
    this.bus.pokeAll();
    await this.notify(`${this.node}|${STARTED}`);
    await this.announce();
  }

  /** Says what this node's followers want; also its hello. */
  private announce(): Promise<void> {
    // One at a time, each with the interest of its own moment: two at once could overtake each other on the way (each
    // NOTIFY runs on a pool connection of its own), and an older, narrower want would then stand until the next hello.
    const step = async () => {
      const text = formatInterest(this.myInterest());
      if (await this.notify(`${this.node}|${text}`)) this.announced = text;
    };
    // A step that failed must not stop the ones after it.
    this.announcing = this.announcing.then(step, step);
    return this.announcing;
  }

  private myInterest(): Interest {
    const mine = this.bus.interest();
    const all = mine.all || mine.agents.size > MAX_NAMED_INTEREST;
    const types = mine.types?.map((t) => t.trim());
    // Patterns that would not survive the message's syntax, or too many to fit beside the agents, count as every type.
    const namedTypes = types && types.every((t) => TYPE_PATTERN.test(t)) && types.join(",").length <= MAX_TYPES_TEXT ? types : undefined;
    return { all, agents: all ? new Set() : mine.agents, ...(namedTypes ? { types: namedTypes } : {}) };
  }

  private async send(): Promise<void> {
    this.timer = undefined;
    const ids = [...this.dirty];
    this.dirty.clear();
    await this.notifyAgents(ids);
  }

  private async notifyAgents(ids: string[]): Promise<void> {
    for (let i = 0; i < ids.length; i += PER_NOTICE) await this.notify(`${this.node}|${ids.slice(i, i + PER_NOTICE).join(",")}`);
  }

  /** Whether the notice went out. */
  private async notify(payload: string): Promise<boolean> {
    if (this.closed) return false;
    try {
      // One autocommit statement: an explicit transaction around it cost two more round trips.
      await this.db.notify(this.db, CHANNEL, payload);
      return true;
    } catch (err) {
      this.log("warn", "telling other nodes about new events failed", { err: String(err) });
      return false;
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    this.unsubscribe?.();
    this.offInterest?.();
    clearTimeout(this.timer);
    clearTimeout(this.announceTimer);
    clearInterval(this.hello);
    await this.unlisten?.();
  }
}
