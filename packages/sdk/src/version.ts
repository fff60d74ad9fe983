import { readFileSync } from "node:fs";

/**
 * This package's version, from its package.json (one level above both src/
 * and dist/), so the hello a worker sends names the SDK actually installed.
 */
export const SDK_VERSION: string = readVersion();

function readVersion(): string {
  try {
    const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { name?: unknown; version?: unknown };
    if (pkg.name === "@wardrik/sdk" && typeof pkg.version === "string") return pkg.version;
  } catch {
    // A bundler may have moved this file away from package.json.
  }
  return "unknown";
}
