/** One attempt to reach the daemon failed, or a connection ended: what `onReconnect` is told before the wait. */
export interface ReconnectInfo {
  /** The address the next attempt goes to. */
  url: string;
  /** Failed attempts since the link was last up (1 on the first retry). */
  attempt: number;
  /** Milliseconds until the next attempt (0: another node of WARDRIK_URL is tried at once). */
  delayMs: number;
  /** Why the last attempt or connection ended. */
  reason: string;
  /** Results and cost reports of finished calls that wait for the next connection. */
  waiting: number;
}

/** How often a worker that cannot reach its daemon says it is still trying. */
export const STILL_TRYING_EVERY_MS = 30_000;

/**
 * What a worker says about its connection, so that a person reading its
 * output learns what matters without a line per retry: one line when it
 * connects (with the tools the daemon accepted), one when the link is lost or
 * cannot be made, a reminder every 30 s while it stays down, and one when it
 * is back.
 */
export class ConnectionReport {
  private down: { since: number; attempts: number; lastSaid: number; waitingSaid: number } | undefined;
  private everConnected = false;

  constructor(
    private readonly say: { info(message: string): void; warn(message: string): void },
    private readonly now: () => number = Date.now,
  ) {}

  /** The daemon accepted these tools (the first answer of a connection, or more later). */
  registered(url: string, worker: string, accepted: readonly string[], first: boolean): void {
    const serving = accepted.length > 0 ? `serving ${accepted.join(", ")}` : "serving no tools";
    if (!first) {
      if (accepted.length > 0) this.say.info(`Wardrik: the daemon now sends calls of ${accepted.join(", ")} to this worker.`);
      return;
    }
    const down = this.down;
    this.down = undefined;
    if (down && this.everConnected) {
      const after = Math.max(1, Math.round((this.now() - down.since) / 1000));
      this.say.info(`Wardrik: reconnected to ${url} after ${after} s; ${serving}.`);
    } else {
      this.say.info(`Wardrik: worker ${worker} connected to ${url}; ${serving}.`);
    }
    this.everConnected = true;
  }

  /** A connection ended or could not be made; `info.url` is where the next attempt goes. */
  ended(url: string, welcomed: boolean, info: ReconnectInfo): void {
    const now = this.now();
    const next = info.url;
    const waiting = info.waiting > 0 ? ` ${info.waiting} finished call message(s) wait for the connection.` : "";
    const reason = info.reason;
    // A connection welcomed but lost again before its tools were registered (a daemon still shutting down) is one more attempt, not a new loss.
    if (welcomed && this.down === undefined) {
      this.down = { since: now, attempts: 0, lastSaid: now, waitingSaid: info.waiting };
      const retry = next === url ? "reconnecting" : `trying ${next}`;
      this.say.warn(
        `Wardrik: lost the connection to ${url} (${reason}); ${retry}. Calls resume once it is back; until then this worker says so every ${STILL_TRYING_EVERY_MS / 1000} s.${waiting}`,
      );
      return;
    }
    const retry = next === url ? "retrying" : `trying ${next}`;
    const first = this.down === undefined;
    const down = (this.down ??= { since: now, attempts: 0, lastSaid: now, waitingSaid: 0 });
    down.attempts += 1;
    if (first) {
      const hint = this.everConnected ? "" : " Is `wardrik daemon` running, and is WARDRIK_URL its address?";
      this.say.warn(`Wardrik: could not connect to ${url} (${reason}); ${retry} in the background.${hint}`);
    } else if (now - down.lastSaid >= STILL_TRYING_EVERY_MS) {
      down.lastSaid = now;
      const secs = Math.round((now - down.since) / 1000);
      this.say.warn(`Wardrik: still cannot reach ${url} after ${down.attempts} attempts in ${secs} s (${reason}); ${retry}.${waiting}`);
      down.waitingSaid = info.waiting;
    } else if (info.waiting > 0 && down.waitingSaid === 0) {
      // Results held for the daemon are worth a line of their own, once: whoever reads this knows to bring the daemon back.
      down.waitingSaid = info.waiting;
      this.say.warn(`Wardrik: ${info.waiting} finished call message(s) wait for the connection to ${url}.`);
    }
  }
}
