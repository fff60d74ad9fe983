import { createRequire } from "node:module";
import type pgModule from "pg";

let loaded: typeof pgModule | undefined;

/**
 * The `pg` driver, loaded on first use: a daemon on SQLite never loads it
 * (pg and pg-types were a tenth of the daemon's start-up CPU).
 */
export function loadPg(): typeof pgModule {
  return (loaded ??= createRequire(import.meta.url)("pg") as typeof pgModule);
}
