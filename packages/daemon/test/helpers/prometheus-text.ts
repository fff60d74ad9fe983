/**
 * A strict reader of the Prometheus text exposition format (0.0.4), as a
 * scraper reads GET /metrics: every sample belongs to a family announced by
 * `# TYPE`, label values are unescaped, a series appears once, and a
 * histogram's buckets are cumulative and end at +Inf = _count. Anything else
 * throws with the line number, so a malformed exposition fails the test.
 */

export interface Sample {
  /** The sample's own name (`x_bucket`, `x_sum`, `x_count` for a histogram `x`). */
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface MetricFamily {
  name: string;
  type: "counter" | "gauge" | "histogram" | "summary" | "untyped";
  help: string;
  samples: Sample[];
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

export function parsePrometheusText(text: string): Map<string, MetricFamily> {
  const families = new Map<string, MetricFamily>();
  const seen = new Set<string>();
  const lines = text.split("\n");
  if (lines.at(-1) !== "") throw new Error("the exposition does not end with a line feed");
  lines.forEach((line, i) => {
    const at = `line ${i + 1} (${JSON.stringify(line)})`;
    if (line === "") return;
    if (line.startsWith("#")) {
      const m = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(line);
      if (!m) return; // a plain comment
      const [, kind, name, rest] = m as unknown as [string, string, string, string];
      if (!NAME.test(name)) throw new Error(`${at}: bad metric name`);
      const f = families.get(name) ?? { name, type: "untyped" as const, help: "", samples: [] };
      if (kind === "HELP") f.help = rest;
      else {
        if (!["counter", "gauge", "histogram", "summary", "untyped"].includes(rest)) throw new Error(`${at}: bad type`);
        if (f.samples.length > 0) throw new Error(`${at}: TYPE after samples`);
        f.type = rest as MetricFamily["type"];
      }
      families.set(name, f);
      return;
    }
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)(?: -?\d+)?$/.exec(line);
    if (!m) throw new Error(`${at}: not a sample line`);
    const [, name, labelText, valueText] = m as unknown as [string, string, string | undefined, string];
    const labels = parseLabels(labelText ?? "", at);
    const value = parseValue(valueText, at);
    const family = familyOf(name, families);
    if (!family) throw new Error(`${at}: no # TYPE announced ${name}`);
    const key = `${name}${JSON.stringify(Object.entries(labels).sort())}`;
    if (seen.has(key)) throw new Error(`${at}: the same series twice`);
    seen.add(key);
    family.samples.push({ name, labels, value });
  });
  for (const f of families.values()) if (f.type === "histogram") checkHistogram(f);
  return families;
}

function familyOf(name: string, families: Map<string, MetricFamily>): MetricFamily | undefined {
  const exact = families.get(name);
  if (exact && exact.type !== "histogram") return exact;
  const base = /^(.*)_(bucket|sum|count)$/.exec(name)?.[1];
  const f = base !== undefined ? families.get(base) : undefined;
  return f?.type === "histogram" ? f : exact;
}

function parseLabels(text: string, at: string): Record<string, string> {
  const labels: Record<string, string> = {};
  let rest = text;
  while (rest !== "") {
    const m = /^([^=]+)="((?:[^"\\]|\\.)*)"(,?)/.exec(rest);
    if (!m) throw new Error(`${at}: bad labels at ${JSON.stringify(rest)}`);
    const [all, name, raw, comma] = m as unknown as [string, string, string, string];
    if (!LABEL_NAME.test(name)) throw new Error(`${at}: bad label name ${name}`);
    if (name in labels) throw new Error(`${at}: label ${name} twice`);
    labels[name] = raw.replace(/\\(.)/g, (_, c: string) => (c === "n" ? "\n" : c));
    rest = rest.slice(all.length);
    if (comma === "" && rest !== "") throw new Error(`${at}: labels not separated by a comma`);
  }
  return labels;
}

function parseValue(text: string, at: string): number {
  if (text === "+Inf") return Infinity;
  if (text === "-Inf") return -Infinity;
  if (text === "NaN") return NaN;
  const n = Number(text);
  if (!Number.isFinite(n)) throw new Error(`${at}: bad value ${text}`);
  return n;
}

/** Each label set's buckets are cumulative, end at +Inf, and +Inf equals _count. */
function checkHistogram(f: MetricFamily): void {
  const bySeries = new Map<string, Sample[]>();
  for (const s of f.samples) {
    const { le, ...rest } = s.labels;
    const key = JSON.stringify(Object.entries(rest).sort());
    if (s.name === `${f.name}_bucket` && le === undefined) throw new Error(`${f.name}: a bucket without le`);
    bySeries.set(key, [...(bySeries.get(key) ?? []), s]);
  }
  for (const [key, samples] of bySeries) {
    const buckets = samples.filter((s) => s.name === `${f.name}_bucket`);
    const count = samples.find((s) => s.name === `${f.name}_count`);
    const sum = samples.find((s) => s.name === `${f.name}_sum`);
    if (!count || !sum || buckets.length === 0) throw new Error(`${f.name}${key}: needs buckets, _sum and _count`);
    let last = -Infinity;
    let lastCount = 0;
    for (const b of buckets) {
      const le = parseValue(b.labels.le!, f.name);
      if (le <= last) throw new Error(`${f.name}${key}: buckets out of order`);
      if (b.value < lastCount) throw new Error(`${f.name}${key}: buckets are not cumulative`);
      last = le;
      lastCount = b.value;
    }
    if (last !== Infinity) throw new Error(`${f.name}${key}: no +Inf bucket`);
    if (lastCount !== count.value) throw new Error(`${f.name}${key}: +Inf bucket ${lastCount} != _count ${count.value}`);
  }
}

/** The sum of the samples named `name` whose labels include `labels`. */
export function sampleValue(families: Map<string, MetricFamily>, name: string, labels: Record<string, string> = {}): number {
  let total = 0;
  for (const f of families.values()) {
    for (const s of f.samples) {
      if (s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v)) total += s.value;
    }
  }
  return total;
}
