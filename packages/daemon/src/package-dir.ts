/**
 * Where this package's files are, found from the running module: the folder
 * of the package.json named `wardrik` above it. A path computed from one
 * module's own URL breaks once modules move: `npm run build` bundles the CLI
 * and daemon into dist/bundle/ (scripts/bundle-daemon.mjs), while vitest runs src/
 * and a library user imports dist/. Walking up finds the same folder from
 * all three: packages/daemon in a checkout, node_modules/wardrik installed.
 */
import { existsSync, readFileSync } from "node:fs";
import { dirname, join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";

interface PackageJson {
  name?: unknown;
  version?: unknown;
}

function findPackage(from: string): { dir: string; json: PackageJson } {
  let dir = dirname(from);
  while (true) {
    const file = join(dir, "package.json");
    if (existsSync(file)) {
      const json = JSON.parse(readFileSync(file, "utf8")) as PackageJson;
      if (json.name === "wardrik") return { dir, json };
    }
    const up = dirname(dir);
    if (up === dir) throw new Error(`Wardrik cannot find its own package.json above ${from}.`);
    dir = up;
  }
}

const here = fileURLToPath(import.meta.url);
const found = findPackage(here);

/** The package's folder: packages/daemon in a checkout, node_modules/wardrik when installed. */
export const PACKAGE_DIR: string = found.dir;

/** The package's package.json, read once. */
export const PACKAGE_JSON: PackageJson = found.json;

/**
 * The folder the running code was built into or runs from: src/ under vitest
 * (the `wardrik-source` condition), dist/ for the library and the bundle. Files
 * that travel beside the code (the migrations) sit below it in both.
 */
export const CODE_DIR: string = join(PACKAGE_DIR, relative(PACKAGE_DIR, here).split(sep)[0] === "src" ? "src" : "dist");
