import { randomUUID } from "node:crypto";
import { ID_PREFIXES } from "@wardrik/protocol";
import { encodeTime, type Clock } from "../ids.js";
import type { Logger } from "../log/logger.js";
import type { DeliveriesTable } from "../store/deliveries.js";
import type { AttemptOutcome, ClaimedDelivery, ClaimedRow, DeliveryClaims, RunResult } from "../store/delivery-claims.js";
import { cloudEventBody } from "./cloud-event-body.js";
import { HttpPoster } from "./http-post.js";
import { nextAttemptAt, retryAfterMs } from "./retry-policy.js";
import { signStandard } from "./signatures.js";
import type { Subscriber } from "./subscribers.js";

export interface DeliverySenderOptions {
  table: DeliveriesTable;
  claims: DeliveryClaims;
  subscribers: readonly Subscriber[];
  clock: Clock;
  log: Logger;
  userAgent: string;
  /** Queues sent to at once, over all subscribers (default 8). */
  concurrency?: number;
  /** How often the outbox is looked at without a kick, for retries coming due and other daemons' events (default 1 s). */
  pollMs?: number;
  /** How long delivered deliveries stay listed before they are deleted (default 7 days); failed ones stay until sent. */
  keepDeliveredMs?: number;
  /** How often delivered deliveries past `keepDeliveredMs` are looked for (default every minute, or each `keepDeliveredMs` if shorter). */
  pruneEveryMs?: number;
  /**
   * Each attempt's outcome, for the metrics: delivered, failed (to be retried) or gave_up (dead-lettered);
   * `possibleRepeat` when a sender that died may have sent it already.
   */
  onAttempt?: (outcome: "delivered" | "failed" | "gave_up", possibleRepeat: boolean) => void;
}

export const DEFAULT_KEEP_DELIVERED_MS = 7 * 24 * 60 * 60 * 1000;
/** A claim outlives the longest attempt by this much, so it never lapses while its request is still out. */
const LEASE_MARGIN_MS = 5000;
/** An attempt starts only if its timeout ends this long before its run's claim lapses. */
const ATTEMPT_SAFETY_MS = 1000;
const ERROR_BODY_CHARS = 200;
/**
 * A round (one transaction: record what finished runs did, claim new runs)
 * waits this long once asked for, so the commits and finished runs of a busy
 * moment share one transaction instead of paying one each.
 */
const ROUND_DELAY_MS = 10;
/** At most this many deliveries of one queue are claimed and sent, one after the other, per round. */
const RUN_LENGTH = 100;
const PRUNE_EVERY_MS = 60_000;
const PRUNE_BATCH = 500;
/** Batches per prune: a backlog of old rows goes over several looks, never in one long stall. */
const PRUNE_BATCHES = 20;

/**
 * Sends the outbox. Each round is one transaction that records the outcomes
 * of the runs sent since the last one and claims new runs: a due queue head
 * (the lowest pending delivery of an agent + subscriber) and the deliveries
 * behind it. A run is sent in queue order, one request at a time, and stops
 * at a failure (which keeps its place as the head until its retry is due),
 * so each agent's events reach a subscriber in order, at least once. Sending
 * runs beside the turns, never inside them: at most `concurrency` runs are
 * out, each request bounded by its subscriber's timeout, so a slow or dead
 * subscriber only delays its own queue.
 */
export class DeliverySender {
  private readonly claim = randomUUID();
  private readonly bySubscriber: Map<string, Subscriber>;
  private readonly concurrency: number;
  private readonly leaseMs: number;
  private readonly poster = new HttpPoster();
  private readonly running = new Set<Promise<void>>();
  /** Runs sent (or cut short) whose outcomes the next round records. */
  private readonly finished: RunResult[] = [];
  private sending = 0;
  private round: Promise<void> | undefined;
  private again = false;
  private started = false;
  private closed = false;
  private polling = false;
  private lastPrune = 0;
  private timer: NodeJS.Timeout | undefined;
  private soon: NodeJS.Timeout | undefined;

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

  /** Looks for work soon (a queue got a new head, or one was queued again); kicks close together make one round. */
  kick(): void {
    this.roundSoon(ROUND_DELAY_MS);
  }

  /** Stops sending: requests out are cut off; what was sent is recorded and the rest's claims are given back. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    if (this.soon) clearTimeout(this.soon);
    this.poster.abortAll("the daemon is stopping");
    // A round under way may still start runs: they stop before their first request, now that the sender is closed.
    await this.round;
    await Promise.allSettled([...this.running]);
    if (this.finished.length > 0) await this.runRound();
    this.poster.close("the daemon is stopping");
  }

  private roundSoon(delayMs: number): void {
    // Before start the daemon may still give back a dead process's claims: nothing is sent until then.
    if (!this.started || this.closed) return;
    if (this.round) {
      this.again = true;
      return;
    }
    if (this.soon) return;
    this.soon = setTimeout(() => {
      this.soon = undefined;
      this.round = this.runRound().finally(() => {
        this.round = undefined;
        if (this.again) {
          this.again = false;
          this.roundSoon(ROUND_DELAY_MS);
        }
      });
    }, delayMs);
  }

  private async runRound(): Promise<void> {
    const results = this.finished.splice(0);
    const heads = this.closed ? 0 : this.concurrency - this.sending;
    if (results.length === 0 && heads <= 0) return;
    const now = this.o.clock.now().getTime();
    let settled: { lost: ClaimedRow[]; runs: ClaimedDelivery[][] };
    try {
      settled = await this.o.claims.settle(this.claim, results, now, now + this.leaseMs, heads, RUN_LENGTH);
    } catch (err) {
      // Unrecorded, these runs' claims lapse and their deliveries are sent again: at least once, none lost.
      this.o.log("error", "could not record or claim webhook deliveries", { err: String(err) });
      return;
    }
    const lost = new Set(settled.lost.map((r) => r.id));
    for (const id of lost) this.o.log("warn", "a webhook delivery's claim lapsed; another daemon sends it", { delivery: id });
    for (const r of results) for (const a of r.attempts) if (!lost.has(a.row.id)) this.report(a.row, a.outcome);
    for (const run of settled.runs) this.launch(run);
  }

  private launch(run: ClaimedDelivery[]): void {
    this.sending++;
    const done: Promise<void> = this.send(run)
      .then((r) => void this.finished.push(r))
      .catch((err: unknown) => this.o.log("error", "a webhook run failed", { delivery: run[0]!.row.id, err: String(err) }))
      .finally(() => {
        this.sending--;
        this.running.delete(done);
        this.roundSoon(ROUND_DELAY_MS);
      });
    this.running.add(done);
  }

  /** Sends a run in queue order until it ends, one is to be retried, or the run's claim is too close to lapsing. */
  private async send(run: readonly ClaimedDelivery[]): Promise<RunResult> {
    const attempts: { row: ClaimedRow; outcome: AttemptOutcome }[] = [];
    for (const c of run) {
      if (this.closed) break;
      const sub = this.bySubscriber.get(c.row.subscriber);
      if (sub && this.o.clock.now().getTime() + sub.timeoutMs + ATTEMPT_SAFETY_MS > Number(c.row.claimed_until)) break;
      const outcome = await this.attempt(c, sub);
      if (!outcome) break;
      attempts.push({ row: c.row, outcome });
      if (outcome.next.status === "pending") break;
    }
    return { attempts, unsent: run.slice(attempts.length).map((c) => c.row) };
  }

  /** One POST and what it came to; undefined when the daemon stopped it (that is no attempt: it is sent again). */
  private async attempt(c: ClaimedDelivery, sub: Subscriber | undefined): Promise<AttemptOutcome | undefined> {
    const startedAt = this.o.clock.now();
    const startedIso = startedAt.toISOString();
    if (!sub) {
      return {
        startedAt: startedIso,
        durationMs: 0,
        httpStatus: null,
        error: `subscriber ${c.row.subscriber} is no longer in config.yaml`,
        next: { status: "failed", endedAt: startedIso },
      };
    }
    const body = cloudEventBody(c.event);
    const timestamp = Math.floor(startedAt.getTime() / 1000);
    const headers: Record<string, string> = {
      "content-type": "application/cloudevents+json",
      "user-agent": this.o.userAgent,
      // The event's ID: the same on every attempt, so a receiver can drop a repeat.
      "webhook-id": c.event.id,
      "webhook-timestamp": String(timestamp),
    };
    if (sub.signingKey) headers["webhook-signature"] = signStandard(sub.signingKey, c.event.id, timestamp, body);
    let status: number | null = null;
    let error: string | null = null;
    let retryAfter: number | undefined;
    try {
      const res = await this.poster.post(sub.target, headers, body, sub.timeoutMs);
      status = res.status;
      if (status < 200 || status > 299) {
        error = `HTTP ${status}${res.body ? `: ${res.body.slice(0, ERROR_BODY_CHARS)}` : ""}`;
        retryAfter = retryAfterMs(res.retryAfter, Date.now());
      }
    } catch (err) {
      if (this.closed) return undefined;
      error = describeFailure(err);
    }
    const nowMs = this.o.clock.now().getTime();
    const timing = { startedAt: startedIso, durationMs: Math.max(0, nowMs - startedAt.getTime()), httpStatus: status, error };
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

  private async poll(): Promise<void> {
    if (this.closed || this.polling) return;
    this.polling = true;
    try {
      const now = this.o.clock.now().getTime();
      if (this.sending < this.concurrency && !this.round) {
        // A read first: an idle outbox costs no write transaction.
        const due = await this.o.table.nextDue(now);
        if (due !== undefined && due <= now) this.roundSoon(0);
      }
      if (now - this.lastPrune >= (this.o.pruneEveryMs ?? Math.min(PRUNE_EVERY_MS, this.o.keepDeliveredMs ?? PRUNE_EVERY_MS))) {
        this.lastPrune = now;
        await this.prune(now);
      }
    } catch (err) {
      this.o.log("warn", "could not read the webhook outbox", { err: String(err) });
    } finally {
      this.polling = false;
    }
  }

  /** Deletes delivered deliveries older than the retention, a batch per transaction, letting turns run between. */
  private async prune(now: number): Promise<void> {
    const before = Math.max(0, now - (this.o.keepDeliveredMs ?? DEFAULT_KEEP_DELIVERED_MS));
    // Delivery IDs are ULIDs: every ID queued before `before` sorts below this one.
    const idBefore = `${ID_PREFIXES.delivery}${encodeTime(before)}`;
    const beforeIso = new Date(before).toISOString();
    for (let i = 0; i < PRUNE_BATCHES && !this.closed; i++) {
      if ((await this.o.table.prune(idBefore, beforeIso, PRUNE_BATCH)) < PRUNE_BATCH) return;
      await new Promise((r) => setImmediate(r));
    }
  }

  private report(row: ClaimedRow, o: AttemptOutcome): void {
    this.o.onAttempt?.(o.next.status === "delivered" ? "delivered" : o.next.status === "failed" ? "gave_up" : "failed", row.maybe_sent);
    if (o.next.status === "delivered") return;
    const fields = { delivery: row.id, subscriber: row.subscriber, event: row.event_id, attempt: row.attempts + 1 };
    if (o.next.status === "failed")
      this.o.log("warn", "webhook delivery dead-lettered: its retry window is over", { ...fields, error: o.error });
    else
      this.o.log("debug", "webhook delivery failed; it will be retried", {
        ...fields,
        error: o.error,
        next: new Date(o.next.nextAt).toISOString(),
      });
  }
}

function describeFailure(err: unknown): string {
  const code = (err as { code?: unknown }).code;
  if (typeof code === "string") return code;
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (err instanceof Error ? err.message : String(err));
}
