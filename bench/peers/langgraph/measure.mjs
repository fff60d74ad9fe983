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

/** Bytes this process has passed to write(2) so far (Linux /proc/self/io). */
export function writtenBytes() {
  const m = /^wchar: (\d+)$/m.exec(readFileSync("/proc/self/io", "utf8"));
  return m ? Number(m[1]) : NaN;
}

export function round(n, d) {
  const f = 10 ** d;
  return Math.round(n * f) / f;
}
