import { randomUUID } from "node:crypto";
import type { StoredEvent } from "../events/event-bus.js";
import type { Clock } from "../ids.js";
import type { Logger } from "../log/logger.js";
import type { AttemptOutcome, ClaimedDelivery, DeliveriesTable } from "../store/deliveries.js";
import { postJson } from "./http-post.js";
import { nextAttemptAt, retryAfterMs } from "./retry-policy.js";
import { signStandard } from "./signatures.js";
import type { Subscriber } from "./subscribers.js";

export interface DeliverySenderOptions {
  table: DeliveriesTable;
  subscribers: readonly Subscriber[];
  clock: Clock;
  log: Logger;
  userAgent: string;
  /** Deliveries in flight at once, over all subscribers (default 8). */
  concurrency?: number;
  /** How often the outbox is looked at without a kick, for retries coming due and other daemons' events (default 1 s). */
  pollMs?: number;
  /** Each attempt's outcome, for the metrics: delivered, failed (to be retried) or gave_up (dead-lettered). */
  onAttempt?: (outcome: "delivered" | "failed" | "gave_up") => void;
}

/** A claim outlives the longest attempt by this much, so it never lapses while its request is still out. */
const LEASE_MARGIN_MS = 5000;
const ERROR_BODY_CHARS = 200;
/** A kick waits this long, so the commits of a busy moment make one claiming transaction, not one each. */
const KICK_DELAY_MS = 5;

/**
 * Sends the outbox: claims due deliveries (each the head of its agent +
 * subscriber queue), POSTs each event as a structured CloudEvent signed as
 * Standard Webhooks specifies, and records every attempt. It runs beside the
 * turns, never inside them: at most `concurrency` requests are out, each
 * bounded by its subscriber's timeout, so a slow or dead subscriber only
 * delays its own queue.
 */
export class DeliverySender {
  private readonly claim = randomUUID();
  private readonly bySubscriber: Map<string, Subscriber>;
  private readonly concurrency: number;
  private readonly leaseMs: number;
  private readonly running = new Set<Promise<void>>();
  private readonly aborts = new Set<AbortController>();
  private inFlight = 0;
  private filling = false;
  private again = false;
  private started = false;
  private closed = false;
  private timer: NodeJS.Timeout | undefined;
  private soon: NodeJS.Timeout | undefined;
  /** A look found more due heads than there was room for: a finished one makes room for them. */
  private starved = false;

  constructor(private readonly o: DeliverySenderOptions) {
    this.bySubscriber = new Map(o.subscribers.map((s) => [s.key, s]));
    this.concurrency = o.concurrency ?? 8;
    this.leaseMs = Math.max(0, ...o.subscribers.map((s) => s.timeoutMs)) + LEASE_MARGIN_MS;
  }

  start(): void {
    this.started = true;
    this.timer = setInterval(() => void this.poll(), this.o.pollMs ?? 1000);
    this.timer.unref();
    this.kick();
  }

  /** Looks for work soon (a queue got a new head, or one was queued again); kicks close together make one look. */
  kick(): void {
    // Before start the daemon may still give back a dead process's claims: nothing is sent until then.
    if (!this.started || this.closed) return;
    if (this.filling) {
      this.again = true;
      return;
    }
    if (this.soon) return;
    this.soon = setTimeout(() => {
      this.soon = undefined;
      void this.fill();
    }, KICK_DELAY_MS);
  }

  /** Stops sending: requests out are aborted and their claims given back, so they are sent again later. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    if (this.soon) clearTimeout(this.soon);
    for (const a of this.aborts) a.abort(new Error("the daemon is stopping"));
    await Promise.allSettled([...this.running]);
  }

  private async poll(): Promise<void> {
    if (this.closed || this.inFlight >= this.concurrency) return;
    try {
      // A read first: an idle outbox costs no write transaction.
      const now = this.o.clock.now().getTime();
      const due = await this.o.table.nextDue(now);
      if (due !== undefined && due <= now) this.kick();
    } catch (err) {
      this.o.log("warn", "could not read the webhook outbox", { err: String(err) });
    }
  }

  private async fill(): Promise<void> {
    this.filling = true;
    try {
      do {
        this.again = false;
        const room = this.concurrency - this.inFlight;
        if (room <= 0) this.starved = true;
        if (room <= 0 || this.closed) break;
        const now = this.o.clock.now().getTime();
        const claimed = await this.o.table.claim(this.claim, now, now + this.leaseMs, room);
        for (const c of claimed) this.launch(c);
        this.starved = claimed.length === room;
        if (this.starved) this.again = true;
      } while (this.again && !this.closed);
    } catch (err) {
      if (!this.closed) this.o.log("error", "could not claim webhook deliveries", { err: String(err) });
    } finally {
      this.filling = false;
    }
  }

  private launch(first: ClaimedDelivery): void {
    this.inFlight++;
    const done: Promise<void> = this.drive(first)
      .catch((err: unknown) => {
        if (!this.closed) this.o.log("error", "a webhook delivery could not be recorded", { delivery: first.row.id, err: String(err) });
      })
      .finally(() => {
        this.inFlight--;
        this.running.delete(done);
        // Its queue is done with (the next was claimed with its outcome); heads that found no room look again.
        if (this.starved) this.kick();
      });
    this.running.add(done);
  }

  /** Sends one delivery, then (in the same commit as its outcome) the next of its queue, while there is one. */
  private async drive(first: ClaimedDelivery): Promise<void> {
    let c: ClaimedDelivery | undefined = first;
    while (c) {
      const outcome = this.closed ? undefined : await this.attempt(c);
      if (!outcome || this.closed) {
        await this.o.table.release(c.row.id, this.claim);
        return;
      }
      const now = this.o.clock.now().getTime();
      const r = await this.o.table.finish(c.row, this.claim, outcome, now, now + this.leaseMs);
      if (r.lost) this.o.log("warn", "a webhook delivery's claim lapsed; another daemon sends it", { delivery: c.row.id });
      this.report(c, outcome);
      c = r.next;
    }
  }

  private async attempt(c: ClaimedDelivery): Promise<AttemptOutcome> {
    const startedAt = this.o.clock.now();
    const sub = this.bySubscriber.get(c.row.subscriber);
    const base = { startedAt: startedAt.toISOString(), durationMs: 0 };
    if (!sub) {
      return {
        ...base,
        httpStatus: null,
        error: `subscriber ${c.row.subscriber} is no longer in config.yaml`,
        next: { status: "failed", endedAt: startedAt.toISOString() },
      };
    }
    const body = JSON.stringify(cloudEvent(c.event));
    const timestamp = Math.floor(startedAt.getTime() / 1000);
    const headers: Record<string, string> = {
      "content-type": "application/cloudevents+json",
      "user-agent": this.o.userAgent,
      // The event's ID: the same on every attempt, so a receiver can drop a repeat.
      "webhook-id": c.event.id,
      "webhook-timestamp": String(timestamp),
    };
    if (sub.signingKey) headers["webhook-signature"] = signStandard(sub.signingKey, c.event.id, timestamp, body);
    const ac = new AbortController();
    this.aborts.add(ac);
    const timer = setTimeout(() => ac.abort(new Error(`no answer within ${sub.timeoutMs / 1000} s`)), sub.timeoutMs);
    let status: number | null = null;
    let error: string | null = null;
    let retryAfter: number | undefined;
    try {
      const res = await postJson(sub.url, headers, body, ac.signal);
      status = res.status;
      if (status < 200 || status > 299) {
        error = `HTTP ${status}${res.body ? `: ${res.body.slice(0, ERROR_BODY_CHARS)}` : ""}`;
        retryAfter = retryAfterMs(res.retryAfter, Date.now());
      }
    } catch (err) {
      error = describeFailure(ac.signal.reason, err);
    } finally {
      clearTimeout(timer);
      this.aborts.delete(ac);
    }
    const nowMs = this.o.clock.now().getTime();
    const timing = { startedAt: startedAt.toISOString(), durationMs: Math.max(0, nowMs - startedAt.getTime()), httpStatus: status, error };
    if (error === null) return { ...timing, next: { status: "delivered" } };
    const at = nextAttemptAt({
      failedAttempts: c.row.attempts + 1,
      nowMs,
      windowFromMs: c.row.window_from,
      retryForMs: sub.retryForMs,
      retryAfterMs: retryAfter,
    });
    return {
      ...timing,
      next: at === undefined ? { status: "failed", endedAt: new Date(nowMs).toISOString() } : { status: "pending", nextAt: at },
    };
  }

  private report(c: ClaimedDelivery, o: AttemptOutcome): void {
    this.o.onAttempt?.(o.next.status === "delivered" ? "delivered" : o.next.status === "failed" ? "gave_up" : "failed");
    const fields = { delivery: c.row.id, subscriber: c.row.subscriber, event: c.event.id, attempt: c.row.attempts + 1 };
    if (o.next.status === "failed")
      this.o.log("warn", "webhook delivery dead-lettered: its retry window is over", { ...fields, error: o.error });
    else if (o.next.status === "pending")
      this.o.log("debug", "webhook delivery failed; it will be retried", {
        ...fields,
        error: o.error,
        next: new Date(o.next.nextAt).toISOString(),
      });
  }
}

/** The event as subscribers get it: the CloudEvent, without the daemon's routing fields. */
function cloudEvent(e: StoredEvent): Omit<StoredEvent, "agent" | "org"> {
  const { agent: _agent, org: _org, ...rest } = e;
  return rest;
}

function describeFailure(reason: unknown, err: unknown): string {
  if (reason instanceof Error) return reason.message;
  const code = (err as { code?: unknown }).code;
  if (typeof code === "string") return code;
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (err instanceof Error ? err.message : String(err));
}
