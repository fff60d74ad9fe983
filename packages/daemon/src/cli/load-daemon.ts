import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type * as DaemonProcess from "../daemon-process.js";
import { requireWithCodeCache } from "./code-cache.js";

export interface LoadedDaemon {
  daemon: typeof DaemonProcess;
  /** From the bundle: the file, and whether V8 compiled it from the build's code cache. */
  codeCache?: { file: string; used: boolean };
}

/**
 * What `wardrik daemon` runs: from the bundle (bin/wardrik.js), dist/bundle/daemon.cjs, required with the code
 * cache the build made of it (code-cache.ts, scripts/bundle-daemon.mjs); unbundled, daemon-process.ts itself.
 */
export async function loadDaemon(): Promise<LoadedDaemon> {
  // Beside cli.cjs in the bundle; beside this file in dist/cli/ there is none.
  const bundled = fileURLToPath(new URL("./daemon.cjs", import.meta.url));
  if (!existsSync(bundled)) return { daemon: await import("../daemon-process.js") };
  const { exports, cacheUsed } = requireWithCodeCache(bundled);
  return { daemon: exports as typeof DaemonProcess, codeCache: { file: bundled, used: cacheUsed } };
}
