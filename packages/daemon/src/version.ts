import { PACKAGE_JSON } from "./package-dir.js";

/**
 * Wardrik's version, from this package's package.json (found by
 * package-dir.ts from src/, dist/ and the bundle alike): what `--version`,
 * /v1/health and the package.json that `wardrik init` writes (the SDK of the
 * same version) all report.
 */
export const VERSION: string = readVersion();

function readVersion(): string {
  if (typeof PACKAGE_JSON.version !== "string") throw new Error("Wardrik cannot read its own version from package.json.");
  return PACKAGE_JSON.version;
}
