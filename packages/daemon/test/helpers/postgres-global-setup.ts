/**
 * vitest globalSetup of the `postgres` project: one PostgreSQL server for the
 * whole run, started only when that project has tests to run, and stopped
 * (data directory deleted) when the run ends, whether tests failed or not.
 * Tests reach it through test-database.ts, which makes a database per file or test.
 *
 * It also migrates one database, MIGRATED_TEMPLATE, that nobody connects to
 * afterwards: openTestDb copies it (CREATE DATABASE ... TEMPLATE) instead of
 * running every migration again for each database, which cost about a second
 * each on PostgreSQL (the lifecycle property test makes one per history).
 */
import { startTestPostgres } from "@wardrik/testing/postgres";
import pg from "pg";
import type { TestProject } from "vitest/node";
import { openDb } from "../../src/store/open-db.js";

/** The migrated database openTestDb copies; never opened by a test. */
export const MIGRATED_TEMPLATE = "wardrik_migrated_template";

declare module "vitest" {
  export interface ProvidedContext {
    /** The superuser URL of this run's PostgreSQL server (provided by the postgres project only). */
    postgresUrl: string;
    /** A database of that server with every migration applied, to copy (nobody may connect to it). */
    postgresTemplate: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const server = await startTestPostgres();
  try {
    await migrateTemplate(server.url);
  } catch (e) {
    await server.stop();
    throw e;
  }
  project.provide("postgresUrl", server.url);
  project.provide("postgresTemplate", MIGRATED_TEMPLATE);
  return () => server.stop();
}

async function migrateTemplate(serverUrl: string): Promise<void> {
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE ${MIGRATED_TEMPLATE}`);
  } finally {
    await admin.end();
  }
  const url = new URL(serverUrl);
  url.pathname = `/${MIGRATED_TEMPLATE}`;
  const db = await openDb(url.toString());
  await db.close();
}
