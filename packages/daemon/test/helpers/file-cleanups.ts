/**
 * What test helpers start for one test file (daemons, databases, receivers)
 * and stop when that file ends. The setup file test/after-each-file.ts runs
 * these from an afterAll hook that vitest registers for every file. A
 * helper's own top-level afterAll would not do: where files share a worker
 * without isolation (the `unit` project) a helper module is imported once,
 * so its hook would belong to the first file only.
 *
 * Processes are stopped before the databases they use are dropped; within a
 * stage, the latest registered goes first. No vitest import here: scripts
 * outside a test run use the helpers too (and nothing runs the cleanups).
 */

/** `processes` (daemons, servers) end before `databases` are dropped. */
export type CleanupStage = "processes" | "databases";

type Cleanup = () => Promise<void> | void;

const stages: Record<CleanupStage, Cleanup[]> = { processes: [], databases: [] };

/** Runs `fn` when the current test file ends. */
export function afterThisFile(fn: Cleanup, stage: CleanupStage = "processes"): void {
  stages[stage].push(fn);
}

/**
 * What a cleanup throws when what it found must fail the file (a daemon in
 * the test process that left something behind), not only be cleaned up.
 */
export class CleanupFailure extends Error {
  override name = "CleanupFailure";
}

/**
 * Runs and forgets every cleanup registered so far; one that fails does not
 * stop the others. Once all ran, the first CleanupFailure is thrown.
 */
export async function runFileCleanups(): Promise<void> {
  let failure: CleanupFailure | undefined;
  for (const stage of ["processes", "databases"] as const) {
    for (const fn of stages[stage].splice(0).reverse()) {
      try {
        await fn();
      } catch (err) {
        // A cleanup that fails (a process already gone) must not keep the others from running.
        if (err instanceof CleanupFailure) failure ??= err;
      }
    }
  }
  if (failure) throw failure;
}
