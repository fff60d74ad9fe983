import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";
import { ALONE_GROUP, AloneSequencer } from "./test/alone-sequencer.js";

const ALL_TEST_FILES = ["packages/*/src/**/*.test.ts", "packages/*/test/**/*.test.ts", "test/**/*.test.ts"];

/** Several daemons on one database: a cluster needs PostgreSQL, so these run on it only. */
const CLUSTER_TEST_FILES = ["packages/daemon/test/cluster/**/*.test.ts"];

/** What only PostgreSQL does (an event held back by an older transaction of the server): run on it only. */
const POSTGRES_BEHAVIOUR_FILES = ["packages/daemon/test/postgres/**/*.test.ts"];

/** Files that run on PostgreSQL only. */
const POSTGRES_ONLY_FILES = [...CLUSTER_TEST_FILES, ...POSTGRES_BEHAVIOUR_FILES];

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
  ...POSTGRES_ONLY_FILES,
];

/**
 * Files of those directories that are about SQLite itself, so they run once:
 * a database written by release 0.1 (a checked-in SQLite file) and the lock
 * that allows one daemon per SQLite file (several daemons share PostgreSQL).
 */
const SQLITE_ONLY_FILES = ["packages/daemon/test/runtime/stored-format.test.ts", "packages/daemon/test/e2e/one-daemon.test.ts"];

/**
 * End-to-end files that run once, on SQLite: what they check does not go
 * through store code that differs between SQLite and PostgreSQL, so a second
 * run on PostgreSQL proves nothing more. The criterion, test by test: every
 * assertion is about the CLI's own behaviour (its parser, flags, --json,
 * completion, the modules it loads, its memo of config.yaml, daemon.json),
 * the config reader and the daemon's start-up messages, the logger, the HTTP
 * layer's answers before a request reaches the store (request IDs, 401, 405,
 * HEAD, 431, refused keys, queries and bodies), the OpenAPI document, or the
 * files `wardrik init` writes. A store step a test takes on the way (a daemon
 * start and stop, a message, a secret set offline) is itself checked on
 * PostgreSQL by the files that stay on both (restart, shutdown, secret-offline,
 * ask, approvals, cancel-clear...). A file that checks stored state, events,
 * turns, leases or anything the store's dialect files do stays on both; when
 * in doubt, it stays.
 */
export const DIALECT_FREE_E2E_FILES = [
  // The CLI's own behaviour.
  "packages/daemon/test/e2e/cli-imports.test.ts",
  "packages/daemon/test/e2e/cli-conventions.test.ts",
  "packages/daemon/test/e2e/cli-usage.test.ts",
  "packages/daemon/test/e2e/daemon-file.test.ts",
  "packages/daemon/test/e2e/init.test.ts",
  "packages/daemon/test/e2e/schema-command.test.ts",
  "packages/daemon/test/e2e/example-worker.test.ts",
  // The config reader, start-up messages, the logger.
  "packages/daemon/test/e2e/config-errors.test.ts",
  "packages/daemon/test/e2e/daemon-logs.test.ts",
  // The HTTP layer and the OpenAPI document.
  "packages/daemon/test/e2e/http-conventions.test.ts",
  "packages/daemon/test/e2e/http-narrow-requests.test.ts",
  "packages/daemon/test/e2e/openapi-document.test.ts",
];

/**
 * Files whose faults are timed against the clock (a lease running out while a
 * daemon is frozen, a kill -9 in the middle of a round, how soon a held-back
 * event reaches a follower): they run after everything else, two at a time
 * (their waits are on conditions, and they spend most of their time waiting
 * on leases, restarts and workers, not on the CPU), with nothing else of the
 * suite beside them. The rest run in parallel; most of their time is spent
 * waiting on the daemons, workers and PostgreSQL they start, so two forks pay
 * off even on two cores.
 */
const ALONE_FILES = ["packages/daemon/test/faults/**/*.test.ts", ...POSTGRES_ONLY_FILES];

/**
 * Files that test modules in the test process itself (a runtime on a real
 * database, real worker processes, loopback servers), with no daemon of the
 * e2e helpers and no process.chdir. They run in the `unit` project, in worker
 * threads that keep what they imported from one file to the next (no
 * per-file isolation): importing the TypeScript sources again for every file
 * cost more than most of these files' tests. What the helpers start for a
 * file is stopped when that file ends (test/after-each-file.ts), also here.
 * A file that needs a process of its own (chdir, module state it changes)
 * stays out of this list; a new file not listed runs in the isolated
 * `sqlite-isolated` project, which is always safe.
 */
export const UNIT_TEST_FILES = [
  "packages/protocol/test/**/*.test.ts",
  "packages/testing/test/**/*.test.ts",
  "packages/sdk/test/{client-follow,client-urls,client-transport,read-sse,finished-calls,outbox,result-resend,seed-examples,tool-definition}.test.ts",
  "packages/console/test/bundle.test.ts",
  "packages/daemon/test/{exports,ids}.test.ts",
  "packages/daemon/test/cli/**/*.test.ts",
  "packages/daemon/test/config/{agent-file,agents-dir,credential-keys,editor-schemas,exports,interval-ms,new-keys,trigger-checks,yaml-source}.test.ts",
  "packages/daemon/test/daemon/{orgs,references,secrets,services}.test.ts",
  "packages/daemon/test/{events,http,log,models,policy,runtime,secrets,slack,store,telemetry,tools,webhooks,workers}/**/*.test.ts",
  "packages/daemon/test/mcp/{conversions,sdk-load-failure}.test.ts",
  "test/{harness,lint}/**/*.test.ts",
  "test/readme-script.test.ts",
];

/** The files of POSTGRES_TEST_FILES that run in the test process (runtime and store on the run's server): the `postgres-unit` project. */
const POSTGRES_UNIT_FILES = ["packages/daemon/test/{runtime,store}/**/*.test.ts", "packages/daemon/test/workers/runtime-failover.test.ts"];

/**
 * The end-to-end files: each starts real daemons and CLI processes and keeps
 * no state of its own in the test process (what the helpers start is
 * stopped when the file ends, test/after-each-file.ts). Where a file needs
 * no daemon process, its daemons run inside the fork, on real HTTP
 * (packages/daemon/test/helpers/daemon-mode.ts says which files). Their projects
 * (`sqlite`, and `postgres`, which holds only these) reuse a fork from
 * one file to the next without per-file isolation: importing the helpers and
 * the protocol package again for every file cost about a second of CPU per
 * file. A file that changes process state (chdir, environment, module state
 * of a helper) belongs elsewhere.
 */
const E2E_TEST_FILES = ["packages/daemon/test/e2e/**/*.test.ts"];

/**
 * Settings of the projects of E2E_TEST_FILES. The timeouts are those
 * spawn-daemon.ts sets with vi.setConfig, which vitest resets after each
 * file: without isolation the helper is evaluated for the first file only.
 */
const E2E_FORKS = { isolate: false, testTimeout: 90_000, hookTimeout: 90_000 };

/** Tests of the tarballs `npm run pack` writes: their project packs once for the run (test/packaging/pack-once.ts). */
const PACKAGING_TEST_FILES = ["test/packaging/**/*.test.ts"];

/**
 * NODE_EXTRA_CA_CERTS (set on some machines, this one included, for a proxy
 * of the npm registry) makes every Node process read and parse that file at
 * start: about 37 ms of CPU here, for each of the suite's thousand-odd
 * daemons, CLI commands, workers and forks. Only the packaging tests reach
 * beyond 127.0.0.1 (npm install), so only they keep it.
 */
const EXTRA_CA_CERTS = process.env.NODE_EXTRA_CA_CERTS;
delete process.env.NODE_EXTRA_CA_CERTS;

/**
 * vitest's default is one fork fewer than the cores: on a 2-core machine, one file at a time. WARDRIK_TEST_FORKS
 * overrides it, to measure whether more files side by side finish sooner on a machine.
 */
const PARALLEL_FORKS = Math.floor(Number(process.env.WARDRIK_TEST_FORKS)) || Math.max(2, availableParallelism() - 1);

/**
 * The alone projects run in a group of their own (vitest's sequence.groupOrder),
 * after all the parallel projects have finished: two files at a time, of either
 * project, and nothing else of the suite beside them.
 */
const ALONE = { maxWorkers: 2, sequence: { groupOrder: ALONE_GROUP } };

export default defineConfig({
  resolve: { conditions: ["wardrik-source"] },
  ssr: { resolve: { conditions: ["wardrik-source"] } },
  test: {
    // Stops what the helpers started for a file when it ends (see packages/daemon/test/helpers/file-cleanups.ts).
    setupFiles: ["./test/after-each-file.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: "forks",
    maxWorkers: PARALLEL_FORKS,
    // The alone group alternates between its two projects (see test/alone-sequencer.ts).
    sequence: { sequencer: AloneSequencer },
    // Fails the run when a test leaves a process (daemon, worker, MCP server) running; every project inherits it, it checks once.
    globalSetup: ["./test/no-leftover-processes.ts"],
    projects: [
      {
        extends: true,
        test: {
          name: "unit",
          include: UNIT_TEST_FILES,
          env: { WARDRIK_TEST_DB: "sqlite" },
          pool: "threads",
          isolate: false,
        },
      },
      {
        extends: true,
        test: {
          // The files of the sqlite run that are not end-to-end, each in a fork of its own (a new file not listed elsewhere lands here: always safe).
          name: "sqlite-isolated",
          include: ALL_TEST_FILES,
          exclude: [...UNIT_TEST_FILES, ...PACKAGING_TEST_FILES, ...ALONE_FILES, ...E2E_TEST_FILES],
          env: { WARDRIK_TEST_DB: "sqlite" },
        },
      },
      {
        extends: true,
        test: {
          ...E2E_FORKS,
          name: "sqlite",
          include: E2E_TEST_FILES,
          env: { WARDRIK_TEST_DB: "sqlite" },
        },
      },
      {
        extends: true,
        test: {
          name: "packaging",
          include: PACKAGING_TEST_FILES,
          env: { WARDRIK_TEST_DB: "sqlite", ...(EXTRA_CA_CERTS ? { NODE_EXTRA_CA_CERTS: EXTRA_CA_CERTS } : {}) },
          // Each test runs npm, tsc or attw over the tarballs: tens of seconds of CPU each on two busy cores.
          testTimeout: 120_000,
          hookTimeout: 300_000,
          globalSetup: ["test/packaging/pack-once.ts"],
        },
      },
      {
        extends: true,
        test: {
          name: "postgres-unit",
          include: POSTGRES_UNIT_FILES,
          exclude: SQLITE_ONLY_FILES,
          env: { WARDRIK_TEST_DB: "postgres" },
          pool: "threads",
          isolate: false,
          // One server for the project, started only when it has files to run.
          globalSetup: ["packages/daemon/test/helpers/postgres-global-setup.ts"],
        },
      },
      {
        extends: true,
        test: {
          // What is left of POSTGRES_TEST_FILES here is E2E_TEST_FILES.
          ...E2E_FORKS,
          name: "postgres",
          include: POSTGRES_TEST_FILES,
          exclude: [...POSTGRES_UNIT_FILES, ...SQLITE_ONLY_FILES, ...ALONE_FILES, ...DIALECT_FREE_E2E_FILES],
          env: { WARDRIK_TEST_DB: "postgres" },
          globalSetup: ["packages/daemon/test/helpers/postgres-global-setup.ts"],
        },
      },
      {
        extends: true,
        test: {
          ...ALONE,
          name: "sqlite-alone",
          include: ALONE_FILES,
          exclude: POSTGRES_ONLY_FILES,
          env: { WARDRIK_TEST_DB: "sqlite" },
        },
      },
      {
        extends: true,
        test: {
          ...ALONE,
          name: "postgres-alone",
          include: ALONE_FILES,
          env: { WARDRIK_TEST_DB: "postgres" },
          globalSetup: ["packages/daemon/test/helpers/postgres-global-setup.ts"],
        },
      },
    ],
  },
});
