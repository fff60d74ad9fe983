import { groupDigits } from "./group-digits.js";

/** Where progress goes: process.stderr, or a stand-in with the same shape in tests. */
export interface ProgressStream {
  isTTY?: boolean;
  columns?: number;
  write(chunk: string): unknown;
}

const CLEAR_LINE = "\r\x1b[K";

/**
 * What `wardrik ask` waits for, on stderr. On a terminal: one status line,
 * rewritten in place with the time spent in the current state, that steps
 * aside while reply text streams and for lines that stay (tool calls,
 * approvals). Elsewhere (a pipe, a log file): one line per change of state.
 */
export class AskProgress {
  private state: { text: string; since: number } | undefined;
  private shown = false;
  private suspended = false;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly stream: ProgressStream,
    private readonly now: () => number = Date.now,
    private readonly tickMs = 1000,
  ) {}

  private get tty(): boolean {
    return this.stream.isTTY === true;
  }

  /**
   * The command now waits for `text` ("waiting for the model", "running
   * files/write"). `quiet`: a line that stays has just said as much, so off a
   * terminal the state is not printed again.
   */
  waiting(text: string, options: { quiet?: boolean } = {}): void {
    if (this.state?.text === text && !this.suspended) return;
    const same = this.state?.text === text;
    if (!same) this.state = { text, since: this.now() };
    this.suspended = false;
    if (!this.tty) {
      if (!same && !options.quiet) this.stream.write(`… ${text}\n`);
      return;
    }
    this.render();
    this.timer ??= setInterval(() => this.render(), this.tickMs);
    this.timer.unref?.();
  }

  /** A line that stays on screen. */
  line(text: string): void {
    this.clear();
    this.stream.write(text + "\n");
    this.render();
  }

  /** Reply text is streaming to the same terminal: no status line until the next state. */
  streaming(): void {
    this.clear();
    this.suspended = true;
  }

  /** The wait is over: the status line goes away for good. */
  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    this.clear();
    this.state = undefined;
  }

  private render(): void {
    if (!this.tty || !this.state || this.suspended) return;
    let text = `${this.state.text} · ${formatDuration(this.now() - this.state.since, false)}`;
    // A pseudo-terminal may report 0 columns.
    const width = this.stream.columns || 80;
    if (text.length > width - 1) text = text.slice(0, Math.max(1, width - 2)) + "…";
    this.stream.write(CLEAR_LINE + text);
    this.shown = true;
  }

  private clear(): void {
    if (!this.shown) return;
    this.stream.write(CLEAR_LINE);
    this.shown = false;
  }
}

/** `850 ms`, `12.3 s` (or `12 s` when `precise` is false), `2 min 05 s`. */
export function formatDuration(ms: number, precise = true): string {
  if (precise && ms < 1000) return `${Math.round(ms)} ms`;
  const s = ms / 1000;
  if (s < 60) return precise ? `${s.toFixed(1)} s` : `${Math.floor(s)} s`;
  const whole = Math.floor(s);
  return `${Math.floor(whole / 60)} min ${String(whole % 60).padStart(2, "0")} s`;
}

/** What a turn cost, summed from its model.replied events. */
export interface TurnUsage {
  modelCalls: number;
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
}

/** The one line `wardrik ask` ends with: how it ended, how long it took, tokens and cost. */
export function summaryLine(outcome: string, ms: number, usage: TurnUsage): string {
  const n = groupDigits;
  const calls = `${n(usage.modelCalls)} model call${usage.modelCalls === 1 ? "" : "s"}`;
  return `${outcome} in ${formatDuration(ms)} · ${calls} · ${n(usage.inputTokens)} tokens in, ${n(usage.outputTokens)} out · $${usage.costUsd.toFixed(4)}`;
}
