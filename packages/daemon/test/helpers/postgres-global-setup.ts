/**
 * vitest globalSetup of the `postgres` project: one PostgreSQL server for the
 * whole run, started only when that project has tests to run, and stopped
 * (data directory deleted) when the run ends, whether tests failed or not.
 * Tests reach it through test-database.ts, which makes a database per file or test.
 */
import { startTestPostgres } from "@wardrik/testing/postgres";
import type { TestProject } from "vitest/node";

declare module "vitest" {
  export interface ProvidedContext {
    /** The superuser URL of this run's PostgreSQL server (provided by the postgres project only). */
    postgresUrl: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const server = await startTestPostgres();
  project.provide("postgresUrl", server.url);
  return () => server.stop();
}
