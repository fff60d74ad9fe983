import { defineConfig } from "vitest/config";

const ALL_TEST_FILES = ["packages/*/src/**/*.test.ts", "packages/*/test/**/*.test.ts", "test/**/*.test.ts"];

/** Several daemons on one database: a cluster needs PostgreSQL, so these run on it only. */
const CLUSTER_TEST_FILES = ["packages/daemon/test/cluster/**/*.test.ts"];

/**
 * The test files that run a second time on PostgreSQL (the `postgres`
 * project). Widen it as more of the engine speaks PostgreSQL: the runtime
 * harness and the spawned-daemon helpers already take their database from
 * WARDRIK_TEST_DB (packages/daemon/test/helpers/test-database.ts).
 */
export const POSTGRES_TEST_FILES = [
  "packages/daemon/test/store/**/*.test.ts",
  "packages/daemon/test/runtime/**/*.test.ts",
  "packages/daemon/test/e2e/**/*.test.ts",
  "packages/daemon/test/faults/**/*.test.ts",
  "packages/daemon/test/workers/runtime-failover.test.ts",
  ...CLUSTER_TEST_FILES,
];

/**
 * Files of those directories that are about SQLite itself, so they run once:
 * a database written by release 0.1 (a checked-in SQLite file) and the lock
 * that allows one daemon per SQLite file (several daemons share PostgreSQL).
 */
const SQLITE_ONLY_FILES = ["packages/daemon/test/runtime/stored-format.test.ts", "packages/daemon/test/e2e/one-daemon.test.ts"];

export default defineConfig({
  resolve: { conditions: ["wardrik-source"] },
  ssr: { resolve: { conditions: ["wardrik-source"] } },
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: "forks",
    // Fails the run when a test leaves a process (daemon, worker, MCP server) running; every project inherits it, it checks once.
    globalSetup: ["./test/no-leftover-processes.ts"],
    projects: [
      {
        extends: true,
        test: {
          name: "sqlite",
          include: ALL_TEST_FILES,
          exclude: CLUSTER_TEST_FILES,
          env: { WARDRIK_TEST_DB: "sqlite" },
          typecheck: { enabled: true, include: ["packages/*/test/**/*.test-d.ts"], tsconfig: "./tsconfig.tests.json" },
        },
      },
      {
        extends: true,
        test: {
          name: "postgres",
          include: POSTGRES_TEST_FILES,
          exclude: SQLITE_ONLY_FILES,
          env: { WARDRIK_TEST_DB: "postgres" },
          // One server for the run, started only when this project has files to run.
          globalSetup: ["packages/daemon/test/helpers/postgres-global-setup.ts"],
        },
      },
    ],
  },
});
