/**
 * How a test starts a worker fixture (a TypeScript file that uses the SDK) as
 * a process of its own: plain Node on one bundled file, made here once per
 * test process and fixture by esbuild from the sources (the SDK and protocol
 * packages through their `wardrik-source` condition, as tsx ran them), with
 * every npm dependency left as an import (one zod, one ws, one OpenTelemetry
 * API, as a user's worker has). Through tsx every start cost about 0.9 s of
 * CPU more (its loader, then each module of the SDK compiled and resolved
 * through hooks), and the suite starts a few hundred workers.
 *
 * The bundles live under node_modules/.cache (so their imports resolve from
 * the repository's node_modules) in a folder of this process and thread,
 * deleted when it exits; a folder whose process is gone (a worker thread
 * ends without an exit event) is deleted by the next test process that builds. Without esbuild, or if a build fails, the fixture runs through
 * tsx as before.
 */
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, readdirSync, rmSync } from "node:fs";
import { basename, join } from "node:path";
import { fileURLToPath } from "node:url";
import { threadId } from "node:worker_threads";
import { buildSync } from "esbuild";
import { isRunning } from "../../src/daemon-file.js";

const REPO_ROOT = fileURLToPath(new URL("../../../../", import.meta.url));
const NODE_MODULES = join(REPO_ROOT, "node_modules");
const BUNDLES_DIR = join(NODE_MODULES, ".cache", "wardrik-test-workers");
const OUT_DIR = join(BUNDLES_DIR, `${process.pid}-${threadId}`);
/** Set once the folder's removal at exit is arranged (a fork that runs several files evaluates this module again for each). */
const CLEANUP = Symbol.for("wardrik.test.worker-bundles.cleanup");

/** The node arguments that run the tsx way (the fallback). */
function throughTsx(file: string): string[] {
  return ["--conditions=wardrik-source", "--import", "tsx", file];
}

const bundles = new Map<string, string>();
let external: string[] | undefined;

/** Node's arguments (after the executable) that run the worker fixture `file` (an absolute path). */
export function workerArgs(file: string): string[] {
  let bundle = bundles.get(file);
  if (bundle === undefined) {
    bundle = build(file) ?? "";
    bundles.set(file, bundle);
  }
  return bundle ? [bundle] : throughTsx(file);
}

function build(file: string): string | undefined {
  const tag = createHash("sha256").update(file).digest("hex").slice(0, 8);
  const outfile = join(OUT_DIR, `${basename(file).replace(/\.ts$/, "")}-${tag}.mjs`);
  try {
    const global = globalThis as { [CLEANUP]?: true };
    if (!global[CLEANUP]) {
      global[CLEANUP] = true;
      process.once("exit", () => rmSync(OUT_DIR, { recursive: true, force: true }));
      removeOrphans();
    }
    mkdirSync(OUT_DIR, { recursive: true });
    buildSync({
      entryPoints: [file],
      outfile,
      bundle: true,
      platform: "node",
      format: "esm",
      target: "node20",
      conditions: ["wardrik-source"],
      external: (external ??= npmPackages()),
      logLevel: "silent",
    });
    return outfile;
  } catch {
    return undefined;
  }
}

/** Every package of the repository's node_modules but the workspace's own (@wardrik/*), as esbuild `external` patterns. */
function npmPackages(): string[] {
  const names: string[] = [];
  for (const entry of readdirSync(NODE_MODULES)) {
    if (entry.startsWith(".") || entry === "@wardrik") continue;
    names.push(entry.startsWith("@") ? `${entry}/*` : entry);
  }
  return names;
}

/** Deletes the folders of test processes that have ended. */
function removeOrphans(): void {
  for (const entry of existsSync(BUNDLES_DIR) ? readdirSync(BUNDLES_DIR) : []) {
    const pid = Number(entry.split("-")[0]);
    if (Number.isInteger(pid) && pid > 0 && !isRunning(pid)) rmSync(join(BUNDLES_DIR, entry), { recursive: true, force: true });
  }
}
