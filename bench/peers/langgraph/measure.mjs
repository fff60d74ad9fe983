// The measuring helpers of bench/lib.ts and bench/turns.ts, the same definitions, so the peer's figures
// are taken exactly as Wardrik's (that file imports the product, which this folder must not need).
import { readFileSync } from "node:fs";

export function percentile(sorted, p) {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

/** Samples RSS every 20 ms, as Wardrik's PeakRss. */
export class PeakRss {
  peak = 0;
  timer = setInterval(() => (this.peak = Math.max(this.peak, process.memoryUsage().rss)), 20);
  stop() {
    clearInterval(this.timer);
    this.peak = Math.max(this.peak, process.memoryUsage().rss);
    return Math.round((this.peak / 1024 / 1024) * 10) / 10;
  }
}

/**
 * The warm-up of Wardrik's W1 and W2, read from bench/turns.ts so the peer's can never drift from it
 * (this folder cannot import that file: it needs the product).
 */
export function wardrikWarmup() {
  const source = readFileSync(new URL("../../turns.ts", import.meta.url), "utf8");
  const m = /WARDRIK_BENCH_WARMUP \?\? (\d+)\)/.exec(source);
  if (!m) throw new Error("bench/turns.ts no longer reads its warm-up as `WARDRIK_BENCH_WARMUP ?? N`: update wardrikWarmup()");
  return Number(m[1]);
}

/** Bytes this process has passed to write(2) so far (Linux /proc/self/io). */
export function writtenBytes() {
  const m = /^wchar: (\d+)$/m.exec(readFileSync("/proc/self/io", "utf8"));
  return m ? Number(m[1]) : NaN;
}

export function round(n, d) {
  const f = 10 ** d;
  return Math.round(n * f) / f;
}
