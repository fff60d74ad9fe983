import { WardrikError, type HookAccepted, type TriggerView } from "@wardrik/protocol";
import type { ProjectConfig } from "./config/types.js";
import type { EventBus, StoredEvent } from "./events/event-bus.js";
import type { Clock, IdGenerator } from "./ids.js";
import type { Logger } from "./log/logger.js";
import type { Runtime } from "./runtime/runtime.js";
import type { SecretRedactor } from "./secrets/redactor.js";
import type { Db, Tx } from "./store/db.js";
import { DeliveriesTable } from "./store/deliveries.js";
import { DeliveryClaims } from "./store/delivery-claims.js";
import { InboundDeliveriesTable } from "./store/inbound-deliveries.js";
import type { AgentRow } from "./store/rows.js";
import type { SecretStore } from "./store/secrets.js";
import type { Store } from "./store/store.js";
import { TriggerFiringsTable } from "./store/trigger-firings.js";
import { describeTriggers } from "./triggers/describe-triggers.js";
import { EventTriggerOutbox } from "./triggers/event-trigger-outbox.js";
import { FiringMarks } from "./triggers/firing-marks.js";
import { FiringSweeper } from "./triggers/firing-sweeper.js";
import { acceptInbound, type InboundRequest } from "./triggers/inbound-webhook.js";
import { ScheduleRunner } from "./triggers/schedule-runner.js";
import { TriggerFirer } from "./triggers/trigger-firer.js";
import { TriggerIndex, type IndexedTrigger } from "./triggers/trigger-index.js";
import { DeliveryAdmin } from "./webhooks/delivery-admin.js";
import { DEFAULT_KEEP_DELIVERED_SECONDS } from "./config/integration-schemas.js";
import { intervalMs } from "./config/positive-number.js";
import { DeliverySender } from "./webhooks/delivery-sender.js";
import { compileSubscribers } from "./webhooks/subscribers.js";
import { WebhookOutbox } from "./webhooks/webhook-outbox.js";

export interface EventsIOOptions {
  config: ProjectConfig;
  db: Db;
  ids: IdGenerator;
  clock: Clock;
  log: Logger;
  redactor: SecretRedactor;
  secrets: SecretStore;
  env: NodeJS.ProcessEnv;
  userAgent: string;
  /** How long delivered deliveries stay listed before they are deleted (default config.yaml's `deliveries.keep_delivered`). */
  keepDeliveredMs?: number;
  /** Each delivery attempt's outcome (the metrics). */
  onDeliveryAttempt?: (outcome: "delivered" | "failed" | "gave_up", possibleRepeat: boolean) => void;
}

/** Agents made or changed elsewhere (another daemon of a cluster) are picked up at least this often. */
const INDEX_REFRESH_MS = 30_000;
/** How often expired inbound deliveries are deleted. */
const SWEEP_INBOUND_MS = 10 * 60_000;
const AGENT_CHANGES = new Set(["agent.loaded", "agent.updated", "agent.removed", "agent.unreadable"].map((t) => `dev.wardrik.${t}`));
const EXACT_REFERENCE = /^\$\{(env|secret):([^}]+)\}$/;

/**
 * Events out and in, wired to the daemon: the webhook outbox and its sender
 * (config.yaml `subscribers:`), and agents' triggers (schedules, inbound
 * webhooks, other agents' events). `onEventsWritten` goes to the Store, so
 * deliveries and event firings commit with their events; `start()` runs the
 * senders and schedules once the daemon has recovered.
 */
export class EventsIO {
  readonly deliveries: DeliveriesTable;
  readonly firings: TriggerFiringsTable;
  private readonly inbound: InboundDeliveriesTable;
  readonly admin: DeliveryAdmin;
  private readonly outbox: WebhookOutbox;
  private readonly marks: FiringMarks;
  private readonly eventTriggers: EventTriggerOutbox;
  private readonly firer: TriggerFirer;
  private readonly schedules: ScheduleRunner;
  private readonly sweeper: FiringSweeper;
  private readonly sender: DeliverySender;
  private index = new TriggerIndex([]);
  private store: Store | undefined;
  private started = false;
  private refreshTimer: NodeJS.Timeout | undefined;
  private periodic: NodeJS.Timeout | undefined;
  private inboundSweep: NodeJS.Timeout | undefined;
  private sweeping: Promise<void> | undefined;
  private unsubscribe: (() => void) | undefined;

  constructor(private readonly o: EventsIOOptions) {
    this.deliveries = new DeliveriesTable(o.db);
    this.firings = new TriggerFiringsTable(o.db);
    this.inbound = new InboundDeliveriesTable(o.db);
    const subscribers = compileSubscribers(o.config.subscribers ?? []);
    this.outbox = new WebhookOutbox(o.config.org, subscribers, this.deliveries, o.ids, o.clock);
    this.sender = new DeliverySender({
      table: this.deliveries,
      claims: new DeliveryClaims(o.db),
      subscribers,
      clock: o.clock,
      log: o.log,
      userAgent: o.userAgent,
      keepDeliveredMs: o.keepDeliveredMs ?? (o.config.deliveries?.keep_delivered ?? DEFAULT_KEEP_DELIVERED_SECONDS) * 1000,
      // How often due retries are looked for (default every second); tests of a spawned daemon look more often.
      pollMs: intervalMs(o.env.WARDRIK_DELIVERY_POLL_MS),
      ...(o.onDeliveryAttempt ? { onAttempt: o.onDeliveryAttempt } : {}),
    });
    this.admin = new DeliveryAdmin(
      this.deliveries,
      o.clock,
      () => this.sender.kick(),
      (t, org) => o.redactor.forOrg(org).redact(t),
    );
    this.marks = new FiringMarks(this.firings, (t, org) => o.redactor.forOrg(org).redact(t));
    this.eventTriggers = new EventTriggerOutbox(() => this.index, this.firings, o.ids);
    this.firer = new TriggerFirer(() => this.store!, this.firings, this.marks, o.ids, o.clock, o.log);
    this.schedules = new ScheduleRunner(this.firer, this.firings, o.clock, o.log);
    // How often other daemons' and lapsed firings are looked for (default every second); tests look more often.
    this.sweeper = new FiringSweeper(this.firer, this.firings, o.clock, o.log, intervalMs(o.env.WARDRIK_FIRING_POLL_MS));
  }

  /** The Store's hook: runs inside every transaction that wrote events. */
  readonly onEventsWritten = async (tx: Tx, events: readonly StoredEvent[]): Promise<void> => {
    const now = this.o.clock.now().toISOString();
    await this.marks.onEventsWritten(tx, events, now);
    await this.outbox.onEventsWritten(tx, events);
    await this.eventTriggers.onEventsWritten(tx, events, now);
  };

  /** Connects the parts made after the Store: the runtime that queues messages, the bus that says what committed. */
  attach(store: Store, runtime: Runtime, bus: EventBus): void {
    this.store = store;
    this.firer.runtime = runtime;
    this.unsubscribe = bus.subscribe("*", (e) => this.committed(e));
  }

  /** Loads the triggers, fires missed schedules, and starts sending; call once the daemon has recovered. */
  async start(): Promise<void> {
    await this.refresh();
    // One daemon per SQLite file: a claim found at start belongs to a process that is gone.
    if (!this.o.db.dialect.shared) {
      await this.deliveries.releaseAll();
      await this.firings.releaseAll();
    }
    if (this.outbox.active) this.o.log("info", "webhook subscribers are on", { subscribers: (this.o.config.subscribers ?? []).length });
    this.started = true;
    this.schedules.update(this.index.schedules());
    this.sender.start();
    this.sweeper.start();
    await this.schedules.catchUp(this.index.schedules());
    this.periodic = setInterval(() => this.refreshSoon(), INDEX_REFRESH_MS);
    this.periodic.unref();
    this.sweepInbound();
    this.inboundSweep = setInterval(() => this.sweepInbound(), SWEEP_INBOUND_MS);
    this.inboundSweep.unref();
  }

  async close(): Promise<void> {
    this.unsubscribe?.();
    if (this.refreshTimer) clearTimeout(this.refreshTimer);
    if (this.periodic) clearInterval(this.periodic);
    if (this.inboundSweep) clearInterval(this.inboundSweep);
    await Promise.all([this.schedules.close(), this.sweeper.close(), this.sender.close(), this.sweeping]);
  }

  /** `POST /v1/hooks/{org}/{name}`. */
  acceptWebhook(req: InboundRequest): Promise<HookAccepted> {
    if (!this.started)
      throw new WardrikError("unavailable", "The daemon is starting; send the webhook again in a moment.", { retryable: true });
    return acceptInbound(
      {
        index: () => this.index,
        firer: this.firer,
        firings: this.firings,
        deliveries: this.inbound,
        clock: this.o.clock,
        newId: () => this.o.ids.next("firing"),
        secretOf: (t) => this.secretOf(t),
      },
      req,
    );
  }

  /** Deletes the inbound deliveries past their time (any node may: the rows are the same for all). */
  private sweepInbound(): void {
    this.sweeping ??= this.inbound
      .sweep(this.o.clock.now().getTime())
      .then(
        () => undefined,
        (err: unknown) => this.o.log("warn", "could not delete expired inbound webhook deliveries", { err: String(err) }),
      )
      .finally(() => (this.sweeping = undefined));
  }

  async describeTriggers(row: AgentRow): Promise<TriggerView[]> {
    const triggers = this.index.ofAgent(row.id);
    if (triggers.length === 0) return [];
    return describeTriggers(triggers, await this.firings.latest(row.id), (t) => this.schedules.nextRun(t));
  }

  private committed(e: StoredEvent): void {
    if (this.outbox.written) {
      this.outbox.written = false;
      this.sender.kick();
    }
    if (this.eventTriggers.written) {
      this.eventTriggers.written = false;
      this.sweeper.kick();
    }
    if (AGENT_CHANGES.has(e.type)) this.refreshSoon();
  }

  /** Agents changed: rebuild the index once the burst of changes (a reload) is over. */
  private refreshSoon(): void {
    if (this.refreshTimer || !this.store) return;
    this.refreshTimer = setTimeout(() => {
      this.refreshTimer = undefined;
      this.refresh().catch((err: unknown) => this.o.log("error", "could not load the agents' triggers", { err: String(err) }));
    }, 20);
    this.refreshTimer.unref();
  }

  private async refresh(): Promise<void> {
    if (!this.store) return;
    this.index = new TriggerIndex(await this.store.agents.list());
    // Schedules run once the daemon has recovered (start), not while it loads its agents.
    if (this.started) this.schedules.update(this.index.schedules());
  }

  private async secretOf(t: IndexedTrigger): Promise<string | undefined> {
    const raw = t.secret;
    if (raw === undefined) return undefined;
    const m = EXACT_REFERENCE.exec(raw);
    if (!m) return raw.includes("${") ? undefined : raw;
    return m[1] === "env" ? this.o.env[m[2]!] : this.o.secrets.get(t.org, m[2]!);
  }
}
