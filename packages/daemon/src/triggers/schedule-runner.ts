import type { Clock } from "../ids.js";
import type { Logger } from "../log/logger.js";
import type { TriggerFiringsTable } from "../store/trigger-firings.js";
import type { TriggerFirer } from "./trigger-firer.js";
import type { IndexedTrigger } from "./trigger-index.js";

/** Even with nothing due, the runner looks again this often (a changed clock, a long sleep of the machine). */
const MAX_WAIT_MS = 30_000;

interface Planned {
  t: IndexedTrigger;
  at: number;
}

/**
 * Fires schedule triggers at their cron times. Every daemon runs every
 * schedule; the firing's key (trigger + scheduled time) lets one of them
 * fire it. At start, a schedule with `catch_up` whose latest due time passed
 * while no daemon ran (after its last firing, and after the agent was last
 * loaded) fires once for that time.
 */
export class ScheduleRunner {
  private planned = new Map<string, Planned>();
  private timer: NodeJS.Timeout | undefined;
  private ticking: Promise<void> | undefined;
  private closed = false;

  constructor(
    private readonly firer: TriggerFirer,
    private readonly firings: TriggerFiringsTable,
    private readonly clock: Clock,
    private readonly log: Logger,
  ) {}

  /** The schedules to run now (after a reload); those kept go on from their planned time. */
  update(schedules: readonly IndexedTrigger[]): void {
    const next = new Map<string, Planned>();
    const now = this.clock.now();
    for (const t of schedules) {
      const id = `${t.agentId} ${t.key}`;
      const old = this.planned.get(id);
      const at = old?.at ?? t.cron!.nextRun(now)?.getTime();
      if (at !== undefined) next.set(id, { t, at });
    }
    this.planned = next;
    this.arm();
  }

  /** When a schedule fires next (for `agent show`). */
  nextRun(t: IndexedTrigger): string | undefined {
    const p = this.planned.get(`${t.agentId} ${t.key}`);
    const at = p?.at ?? t.cron?.nextRun(this.clock.now())?.getTime();
    return at === undefined ? undefined : new Date(at).toISOString();
  }

  /** The firings missed while no daemon ran, once each, at start. */
  async catchUp(schedules: readonly IndexedTrigger[]): Promise<void> {
    const now = this.clock.now();
    for (const t of schedules) {
      if (!t.catchUp || this.closed) continue;
      const missed = t.cron!.previousRuns(1, now)[0];
      if (!missed) continue;
      const last = (await this.firings.lastFireKey(t.agentId, t.key)) ?? t.since;
      if (missed.getTime() <= Date.parse(last)) continue;
      this.log("info", "a schedule came due while no daemon ran; firing it once now", {
        agent: t.agentName,
        trigger: t.key,
        due: missed.toISOString(),
      });
      await this.fire(t, missed.getTime(), true);
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    await this.ticking;
  }

  private arm(): void {
    if (this.timer) clearTimeout(this.timer);
    if (this.closed) return;
    const first = Math.min(...[...this.planned.values()].map((p) => p.at));
    const wait = Number.isFinite(first) ? Math.min(MAX_WAIT_MS, Math.max(0, first - this.clock.now().getTime())) : MAX_WAIT_MS;
    this.timer = setTimeout(() => {
      this.ticking = this.tick().finally(() => {
        this.ticking = undefined;
        this.arm();
      });
    }, wait);
    this.timer.unref();
  }

  private async tick(): Promise<void> {
    const now = this.clock.now();
    for (const p of [...this.planned.values()]) {
      if (this.closed) return;
      if (p.at > now.getTime()) continue;
      const due = p.at;
      // The next time is planned before firing, so a slow firing never fires the same time twice here.
      const next = p.t.cron!.nextRun(now)?.getTime();
      if (next === undefined) this.planned.delete(`${p.t.agentId} ${p.t.key}`);
      else p.at = next;
      await this.fire(p.t, due);
    }
  }

  /** The template's data: `time` (the scheduled time), `schedule`, `agent`, and `missed` (fired late, at start). */
  private async fire(t: IndexedTrigger, due: number, missed = false): Promise<void> {
    try {
      const { result } = await this.firer.fireNew(t, new Date(due).toISOString(), {
        time: new Date(due).toISOString(),
        schedule: "schedule" in t.def ? t.def.schedule : undefined,
        agent: t.agentName,
        missed,
      });
      if (!result.queued && result.reason !== "taken")
        this.log("warn", "a schedule fired but its message was not queued", { agent: t.agentName, trigger: t.key, error: result.error });
    } catch (err) {
      this.log("error", "a schedule could not fire", { agent: t.agentName, trigger: t.key, err: String(err) });
    }
  }
}
