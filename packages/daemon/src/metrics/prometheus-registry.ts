/**
 * A small Prometheus registry: counters, gauges and histograms, rendered in
 * the text exposition format (version 0.0.4) that every Prometheus-compatible
 * scraper reads. Hand-written rather than prom-client or OTel's Prometheus
 * exporter: the daemon needs three metric types, no global registry, no
 * default process metrics, synchronous updates that cost a map lookup, and
 * gauges that are read from the database at scrape time (async collectors).
 * `npm run bench -- metrics-registry` measures it beside prom-client (README,
 * Architecture: prom-client took about 3x the CPU per update and per scrape).
 */

export const PROMETHEUS_CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8";

/** A family stops taking new label sets past this many: a guard against a label that turned out unbounded. */
export const MAX_SERIES_PER_FAMILY = 10_000;
/** The label value that series past the limit are folded into. */
export const OVERFLOW_LABEL = "_other";

/** Maps a label's stored value to the one written (agent IDs to names at scrape time). */
export type LabelRewrite = (label: string, value: string) => string;

interface Series<T> {
  values: readonly string[];
  data: T;
}

interface Renderable {
  readonly name: string;
  render(out: string[], rewrite?: LabelRewrite): void;
}

abstract class Family<T> implements Renderable {
  private readonly series = new Map<string, Series<T>>();

  constructor(
    readonly name: string,
    readonly help: string,
    readonly labels: readonly string[],
  ) {}

  abstract readonly type: "counter" | "gauge" | "histogram";
  protected abstract fresh(): T;
  protected abstract lines(name: string, labels: string, data: T, out: string[]): void;

  protected at(values: readonly string[]): T {
    if (values.length !== this.labels.length) {
      throw new Error(`${this.name} takes ${this.labels.length} label values (${this.labels.join(", ")}), got ${values.length}.`);
    }
    const key = values.join("\u0000");
    let s = this.series.get(key);
    if (!s) {
      const overflow = values.map(() => OVERFLOW_LABEL);
      if (this.series.size >= MAX_SERIES_PER_FAMILY && key !== overflow.join("\u0000")) return this.at(overflow);
      s = { values: [...values], data: this.fresh() };
      this.series.set(key, s);
    }
    return s.data;
  }

  /** Drops every series (gauges that are recomputed at each scrape). */
  reset(): void {
    this.series.clear();
  }

  render(out: string[], rewrite?: LabelRewrite): void {
    out.push(`# HELP ${this.name} ${escapeHelp(this.help)}`, `# TYPE ${this.name} ${this.type}`);
    for (const s of this.series.values()) {
      const pairs = this.labels.map((l, i) => `${l}="${escapeLabel(rewrite ? rewrite(l, s.values[i]!) : s.values[i]!)}"`);
      this.lines(this.name, pairs.join(","), s.data, out);
    }
  }
}

export class Counter extends Family<{ v: number }> {
  readonly type = "counter";

  /** `scale`: counted in units of 1/scale (money in micro-dollars, written as dollars). */
  constructor(
    name: string,
    help: string,
    labels: readonly string[],
    private readonly scale = 1,
  ) {
    super(name, help, labels);
  }

  protected fresh() {
    return { v: 0 };
  }
  inc(values: readonly string[], by = 1): void {
    if (!(by >= 0)) throw new Error(`${this.name} is a counter: it only goes up (got ${by}).`);
    this.at(values).v += by;
  }
  protected lines(name: string, labels: string, data: { v: number }, out: string[]): void {
    out.push(`${name}${braces(labels)} ${formatNumber(data.v / this.scale)}`);
  }
}

export class Gauge extends Family<{ v: number }> {
  readonly type = "gauge";
  protected fresh() {
    return { v: 0 };
  }
  set(values: readonly string[], v: number): void {
    this.at(values).v = v;
  }
  protected lines(name: string, labels: string, data: { v: number }, out: string[]): void {
    out.push(`${name}${braces(labels)} ${formatNumber(data.v)}`);
  }
}

interface HistogramData {
  counts: number[];
  sum: number;
  count: number;
}

export class Histogram extends Family<HistogramData> {
  readonly type = "histogram";

  constructor(
    name: string,
    help: string,
    labels: readonly string[],
    readonly buckets: readonly number[],
  ) {
    super(name, help, labels);
    if (buckets.some((b, i) => i > 0 && b <= buckets[i - 1]!)) throw new Error(`${name}: bucket bounds must increase.`);
  }

  protected fresh(): HistogramData {
    return { counts: this.buckets.map(() => 0), sum: 0, count: 0 };
  }

  observe(values: readonly string[], v: number): void {
    if (!Number.isFinite(v)) return;
    const h = this.at(values);
    // Each bucket counts only what falls in it; render() makes them cumulative.
    const i = this.buckets.findIndex((b) => v <= b);
    if (i >= 0) h.counts[i]! += 1;
    h.sum += v;
    h.count += 1;
  }

  protected lines(name: string, labels: string, data: HistogramData, out: string[]): void {
    const sep = labels === "" ? "" : ",";
    let cumulative = 0;
    this.buckets.forEach((b, i) => {
      cumulative += data.counts[i]!;
      out.push(`${name}_bucket{${labels}${sep}le="${formatNumber(b)}"} ${cumulative}`);
    });
    out.push(`${name}_bucket{${labels}${sep}le="+Inf"} ${data.count}`);
    out.push(`${name}_sum${braces(labels)} ${formatNumber(data.sum)}`);
    out.push(`${name}_count${braces(labels)} ${data.count}`);
  }
}

/** Families in the order they are rendered, and collectors that refresh gauges before each scrape. */
export class Registry {
  private readonly families: Renderable[] = [];
  private readonly collectors: (() => Promise<void> | void)[] = [];

  counter(name: string, help: string, labels: readonly string[] = [], scale = 1): Counter {
    return this.add(new Counter(name, help, labels, scale));
  }

  gauge(name: string, help: string, labels: readonly string[] = []): Gauge {
    return this.add(new Gauge(name, help, labels));
  }

  histogram(name: string, help: string, labels: readonly string[], buckets: readonly number[]): Histogram {
    return this.add(new Histogram(name, help, labels, buckets));
  }

  /** Runs before every render (reads the database, asks the worker gateway). */
  collect(fn: () => Promise<void> | void): void {
    this.collectors.push(fn);
  }

  async render(rewrite?: LabelRewrite): Promise<string> {
    for (const c of this.collectors) await c();
    const out: string[] = [];
    for (const f of this.families) f.render(out, rewrite);
    return out.join("\n") + "\n";
  }

  private add<F extends Renderable>(family: F): F {
    if (!/^[a-zA-Z_:][a-zA-Z0-9_:]*$/.test(family.name)) throw new Error(`"${family.name}" is not a Prometheus metric name.`);
    if (this.families.some((f) => f.name === family.name)) throw new Error(`Metric ${family.name} is registered twice.`);
    this.families.push(family);
    return family;
  }
}

function braces(labels: string): string {
  return labels === "" ? "" : `{${labels}}`;
}

function escapeLabel(value: string): string {
  return value.replace(/\\/g, "\\\\").replace(/\n/g, "\\n").replace(/"/g, '\\"');
}

function escapeHelp(value: string): string {
  return value.replace(/\\/g, "\\\\").replace(/\n/g, "\\n");
}

function formatNumber(n: number): string {
  if (Number.isNaN(n)) return "NaN";
  if (n === Infinity) return "+Inf";
  if (n === -Infinity) return "-Inf";
  return String(n);
}
