import type { Clock } from "../ids.js";
import type { Logger } from "../log/logger.js";
import type { TriggerFiringsTable } from "../store/trigger-firings.js";
import { FIRING_LEASE_MS, type TriggerFirer } from "./trigger-firer.js";

const BATCH = 50;

/**
 * Queues the firings nobody holds: those event triggers wrote with their
 * source events, and those a daemon claimed but did not finish (it crashed,
 * or the agent could not take the message yet). Kicked after a commit that
 * wrote firings; also looks every `pollMs` for other daemons' and lapsed ones.
 */
export class FiringSweeper {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private again = false;
  private started = false;
  private closed = false;

  constructor(
    private readonly firer: TriggerFirer,
    private readonly firings: TriggerFiringsTable,
    private readonly clock: Clock,
    private readonly log: Logger,
    private readonly pollMs = 1000,
  ) {}

  start(): void {
    this.started = true;
    this.timer = setInterval(() => void this.poll(), this.pollMs);
    this.timer.unref();
    this.kick();
  }

  kick(): void {
    if (!this.started || this.closed) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.sweep().finally(() => {
      this.running = undefined;
      if (this.again) this.kick();
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    await this.running;
  }

  private async poll(): Promise<void> {
    try {
      if (!this.running && (await this.firings.anyDue(this.clock.now().getTime()))) this.kick();
    } catch (err) {
      this.log("warn", "could not read trigger firings", { err: String(err) });
    }
  }

  private async sweep(): Promise<void> {
    try {
      do {
        this.again = false;
        const now = this.clock.now().getTime();
        const rows = await this.firings.claimPending(this.firer.claim, now, now + FIRING_LEASE_MS, BATCH);
        // In order: an event trigger's messages follow the order of the events that fired them.
        for (const f of rows) {
          if (this.closed) {
            await this.firings.release(f.id, this.firer.claim);
            continue;
          }
          await this.firer.queue({ id: f.id, agentId: f.agent_id, conversation: f.conversation, text: f.text });
        }
        if (rows.length === BATCH) this.again = true;
      } while (this.again && !this.closed);
    } catch (err) {
      if (!this.closed) this.log("error", "could not queue trigger firings", { err: String(err) });
    }
  }
}
