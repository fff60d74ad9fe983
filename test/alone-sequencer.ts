/**
 * The suite's file order: vitest's own (groups in order, then each project's
 * files, those that failed or took longest last time first), except that the
 * alone group (the fault and cluster files, two at a time) alternates between
 * its projects. Run in vitest's order, the PostgreSQL cluster files (three to
 * five daemons each) would all run beside each other; alternated, most of them
 * run beside a SQLite fault file with one daemon.
 *
 * Within each project, the files of LONG_FOR_THEIR_SIZE go first. With no
 * durations of an earlier run (a fresh clone, as CI is), vitest runs larger
 * files first; these are short files that run one long seeded workload, so
 * they came last: in a CI run the cluster kill harness (41 s) ran on its own
 * at the end while the other fork had nothing left to do.
 */
import { BaseSequencer, type TestSpecification } from "vitest/node";

/** The `sequence.groupOrder` of the alone projects (vitest.config.ts). */
export const ALONE_GROUP = 1;

/** Alone files that take long for their size (seconds in a CI run on two cores), longest first. */
export const LONG_FOR_THEIR_SIZE = [
  "packages/daemon/test/cluster/cluster-start.test.ts", // 21 for four rounds; ten rounds now
  "packages/daemon/test/cluster/kill-harness.test.ts", // 13-41
  "packages/daemon/test/cluster/random-kills.test.ts", // 19
  "packages/daemon/test/faults/kill-harness.test.ts", // 10-12
  "packages/daemon/test/faults/shutdown-connected.test.ts", // 9
];

/** A file's place in LONG_FOR_THEIR_SIZE, or after all of them. */
function longRank(s: TestSpecification): number {
  const at = LONG_FOR_THEIR_SIZE.findIndex((f) => s.moduleId.endsWith(`/${f}`));
  return at === -1 ? LONG_FOR_THEIR_SIZE.length : at;
}

export class AloneSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const isAlone = (s: TestSpecification) => s.project.config.sequence.groupOrder === ALONE_GROUP;
    const queues = new Map<string, TestSpecification[]>();
    // A stable sort: after the long files, vitest's order.
    const alone = sorted.filter(isAlone).sort((a, b) => longRank(a) - longRank(b));
    for (const s of alone) queues.set(s.project.name, [...(queues.get(s.project.name) ?? []), s]);
    const alternated: TestSpecification[] = [];
    while (alternated.length < alone.length)
      for (const queue of queues.values()) {
        const next = queue.shift();
        if (next) alternated.push(next);
      }
    // The groups run in their order whatever this list's, and the alone group is the last.
    return [...sorted.filter((s) => !isAlone(s)), ...alternated];
  }
}
