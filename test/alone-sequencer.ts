/**
 * The suite's file order: vitest's own (groups in order, then each project's
 * files, those that failed or took longest last time first), except that the
 * alone group (the fault and cluster files, two at a time) alternates between
 * its projects. Run in vitest's order, the PostgreSQL cluster files (three to
 * five daemons each) would all run beside each other; alternated, most of them
 * run beside a SQLite fault file with one daemon.
 */
import { BaseSequencer, type TestSpecification } from "vitest/node";

/** The `sequence.groupOrder` of the alone projects (vitest.config.ts). */
export const ALONE_GROUP = 1;

export class AloneSequencer extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const sorted = await super.sort(files);
    const isAlone = (s: TestSpecification) => s.project.config.sequence.groupOrder === ALONE_GROUP;
    const queues = new Map<string, TestSpecification[]>();
    for (const s of sorted.filter(isAlone)) queues.set(s.project.name, [...(queues.get(s.project.name) ?? []), s]);
    const alternated: TestSpecification[] = [];
    while (alternated.length < sorted.filter(isAlone).length)
      for (const queue of queues.values()) {
        const next = queue.shift();
        if (next) alternated.push(next);
      }
    // The groups run in their order whatever this list's, and the alone group is the last.
    return [...sorted.filter((s) => !isAlone(s)), ...alternated];
  }
}
