import type { Logger } from "./log/logger.js";

/** A call's worker is written once the call has run this long without its answer: most calls are answered first. */
export const NOTE_AFTER_MS = 50;

interface Note {
  callId: string;
  worker: string;
  answered: () => boolean;
}

/**
 * Which worker process each call was sent to, for the record (a person asked
 * about a lost answer learns where it ran). Written a moment later, not at
 * once: a call answered meanwhile needs no note, so a quick call costs no
 * commit of its own, and the notes of the calls still running go in one
 * transaction. A crash in that moment leaves the prompt without the
 * worker's name, as a crash before the write always could.
 */
export class WorkerNotes {
  private notes: Note[] = [];
  private timer: NodeJS.Timeout | undefined;

  constructor(
    /** Writes the notes in one transaction (store.calls.sentTo). */
    private readonly write: (notes: { id: string; worker: string }[]) => Promise<void>,
    private readonly log: Logger,
    private readonly afterMs = NOTE_AFTER_MS,
  ) {}

  note(callId: string, worker: string, answered: () => boolean): void {
    this.notes.push({ callId, worker, answered });
    if (!this.timer) {
      this.timer = setTimeout(() => void this.writeDue(), this.afterMs);
      this.timer.unref();
    }
  }

  private async writeDue(): Promise<void> {
    this.timer = undefined;
    const due = this.notes.splice(0).filter((n) => !n.answered());
    if (due.length === 0) return;
    try {
      await this.write(due.map((n) => ({ id: n.callId, worker: n.worker })));
    } catch (err) {
      this.log("warn", "noting calls' workers failed", { calls: due.map((n) => n.callId), err: String(err) });
    }
  }
}
