/**
 * Runs a hand-written part and the library that could replace it on the same
 * path in one process, taking turns (ROUNDS rounds, each in the other order,
 * so the machine's drift falls on both), and reports the CPU time of this
 * process (every thread: the garbage collector's too) per operation: medians,
 * the median of each round's own ratio (steadier on a shared machine), and
 * the spread of the hand-written side's rounds, the noise to read the ratio
 * against. Issue #34's rule: the hand-written part stays only when the
 * library costs at least 2x as much on the measured path.
 */

/** One side: runs `ops` operations of the measured path and resolves when they are done. */
export type Side = (ops: number) => Promise<void> | void;

export interface SideFigures {
  cpu_us_per_op: number;
  ops_per_s: number;
  rounds_cpu_us_per_op: number[];
}

export interface Comparison {
  path: string;
  ops_per_round: number;
  rounds: number;
  hand_written: SideFigures;
  library: SideFigures & { name: string };
  /** Library CPU / hand-written CPU, from the medians. */
  library_cost_ratio: number;
  /** The median of each round's own ratio. */
  library_cost_ratio_per_round: number;
  /** (max - min) / median of the hand-written side's rounds. */
  hand_written_spread_pct: number;
  keep_hand_written: boolean;
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
};
const round2 = (x: number): number => Math.round(x * 100) / 100;

async function measure(side: Side, ops: number): Promise<{ cpuUs: number; wallMs: number }> {
  const cpu = process.cpuUsage();
  const t = performance.now();
  await side(ops);
  const wallMs = performance.now() - t;
  const used = process.cpuUsage(cpu);
  return { cpuUs: used.user + used.system, wallMs };
}

function figures(runs: { cpuUs: number; wallMs: number }[], ops: number): SideFigures {
  const perOp = runs.map((r) => r.cpuUs / ops);
  return {
    cpu_us_per_op: round2(median(perOp)),
    ops_per_s: Math.round(median(runs.map((r) => ops / (r.wallMs / 1000)))),
    rounds_cpu_us_per_op: perOp.map(round2),
  };
}

/** Warms both sides up (`ops / 2` each, twice), then ROUNDS measured rounds of `ops` each. */
export async function compare(
  path: string,
  ops: number,
  rounds: number,
  hand: Side,
  library: { name: string; side: Side },
): Promise<Comparison> {
  for (let i = 0; i < 2; i++) {
    await hand(Math.ceil(ops / 2));
    await library.side(Math.ceil(ops / 2));
  }
  const h: { cpuUs: number; wallMs: number }[] = [];
  const l: { cpuUs: number; wallMs: number }[] = [];
  for (let r = 0; r < rounds; r++) {
    if (r % 2 === 0) {
      h.push(await measure(hand, ops));
      l.push(await measure(library.side, ops));
    } else {
      l.push(await measure(library.side, ops));
      h.push(await measure(hand, ops));
    }
  }
  const hf = figures(h, ops);
  const lf = figures(l, ops);
  const ratio = lf.cpu_us_per_op / hf.cpu_us_per_op;
  const hRounds = hf.rounds_cpu_us_per_op;
  return {
    path,
    ops_per_round: ops,
    rounds,
    hand_written: hf,
    library: { name: library.name, ...lf },
    library_cost_ratio: round2(ratio),
    library_cost_ratio_per_round: round2(median(h.map((x, i) => l[i]!.cpuUs / x.cpuUs))),
    hand_written_spread_pct: Math.round(((Math.max(...hRounds) - Math.min(...hRounds)) / median(hRounds)) * 100),
    keep_hand_written: ratio >= 2,
  };
}

/** Prints the comparisons as the workload's one JSON line. */
export function printComparisons(workload: string, comparisons: Comparison[]): void {
  console.log(
    JSON.stringify({
      workload,
      node: process.version,
      note: "CPU time of this process per operation, medians of alternating rounds; on a shared machine read the ratio against hand_written_spread_pct",
      comparisons,
    }),
  );
}
