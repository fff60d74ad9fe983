/**
 * vitest globalSetup of the `packaging` project: `npm run pack` once for the
 * run instead of once per file, and a local copy of the checkout's own
 * better-sqlite3 build in the layout prebuild-install looks for, so a global
 * install of the tarballs runs better-sqlite3's real install script without
 * compiling SQLite from source for minutes (npm still resolves, fetches and
 * unpacks every dependency and runs every install script). Both live in one
 * temp folder, removed at the end of the run.
 */
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import type { TestProject } from "vitest/node";
import { assertBuilt, packTarballs, type Packed } from "./pack-helpers.js";

declare module "vitest" {
  export interface ProvidedContext {
    /** The run's tarballs (packed once by pack-once.ts), for pack-helpers' packAll. */
    packedTarballs: Packed[];
    /** A folder holding better-sqlite3's prebuilt binary as prebuild-install names it. */
    sqlitePrebuilds: string;
  }
}

const run = promisify(execFile);

export default async function setup(project: TestProject): Promise<() => void> {
  assertBuilt();
  const dir = mkdtempSync(join(tmpdir(), "wardrik-packed-"));
  project.provide("packedTarballs", await packTarballs(join(dir, "dist")));
  project.provide("sqlitePrebuilds", await sqlitePrebuild(join(dir, "prebuilds")));
  return () => rmSync(dir, { recursive: true, force: true });
}

/**
 * better-sqlite3's install script is `prebuild-install || node-gyp rebuild`:
 * prebuild-install first looks in its local-prebuilds folder for
 * better-sqlite3-vVERSION-node-vABI-PLATFORM-ARCH.tar.gz holding
 * build/Release/better_sqlite3.node. The checkout's copy (of the same pinned
 * version) is packed that way.
 */
async function sqlitePrebuild(out: string): Promise<string> {
  const pkgJson = createRequire(import.meta.url).resolve("better-sqlite3/package.json");
  const { version } = JSON.parse(readFileSync(pkgJson, "utf8")) as { version: string };
  mkdirSync(out, { recursive: true });
  const name = `better-sqlite3-v${version}-node-v${process.versions.modules}-${process.platform}-${process.arch}.tar.gz`;
  await run("tar", ["-czf", join(out, name), "-C", dirname(pkgJson), "build/Release/better_sqlite3.node"]);
  return out;
}
