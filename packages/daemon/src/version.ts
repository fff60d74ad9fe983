import { readFileSync } from "node:fs";

/**
 * Wardrik's version, from this package's package.json (one level above both
 * src/ and dist/): what `--version`, /v1/health and the package.json that
 * `wardrik init` writes (the SDK of the same version) all report.
 */
export const VERSION: string = readVersion();

function readVersion(): string {
  const pkg = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { name?: unknown; version?: unknown };
  if (pkg.name !== "wardrik" || typeof pkg.version !== "string") throw new Error("Wardrik cannot read its own version from package.json.");
  return pkg.version;
}
