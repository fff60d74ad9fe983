/**
 * Where a project made by `wardrik init` gets `@wardrik/sdk` (and the
 * `@wardrik/protocol` it needs) while the packages are not on the npm
 * registry: the tarballs of `npm run pack`. `--sdk-from DIR` names a folder
 * that holds them; without it the CLI looks beside itself (the `wardrik`
 * tarball carries both, see scripts/pack.mjs).
 */
import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { PACKAGE_DIR } from "../package-dir.js";
import { VERSION } from "../version.js";

/** Where `npm run pack` puts the SDK's tarballs inside the `wardrik` package. */
export const BUNDLED_TARBALLS = join(PACKAGE_DIR, "sdk-tarballs");

export interface SdkTarballs {
  protocol: string;
  sdk: string;
}

export function tarballNames(version = VERSION): { protocol: string; sdk: string } {
  return { protocol: `wardrik-protocol-${version}.tgz`, sdk: `wardrik-sdk-${version}.tgz` };
}

/** The two tarballs of this CLI's version in `dir` (or its dist/), or undefined when either is missing. */
export function tarballsIn(dir: string): SdkTarballs | undefined {
  const names = tarballNames();
  for (const folder of [dir, join(dir, "dist")]) {
    const protocol = join(folder, names.protocol);
    const sdk = join(folder, names.sdk);
    if (existsSync(protocol) && existsSync(sdk)) return { protocol: resolve(protocol), sdk: resolve(sdk) };
  }
  return undefined;
}

/** The checkout this CLI runs from (the repository root, whose package.json lists the workspaces), if it does. */
export function checkoutRoot(): string | undefined {
  const root = resolve(PACKAGE_DIR, "..", "..");
  try {
    const pkg = JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { name?: unknown };
    return pkg.name === "wardrik-monorepo" ? root : undefined;
  } catch {
    return undefined;
  }
}

/** `--sdk-from DIR`, else the tarballs beside this CLI (an install from the tarballs has them; a checkout does not). */
export function findSdkTarballs(from: string | undefined): SdkTarballs | undefined {
  if (from !== undefined) {
    const found = tarballsIn(from);
    if (!found) {
      const names = tarballNames();
      throw new Error(
        `--sdk-from ${from}: ${names.protocol} and ${names.sdk} are not both there (nor in its dist/). npm run pack in the Wardrik checkout writes them to its dist/.`,
      );
    }
    return found;
  }
  return tarballsIn(BUNDLED_TARBALLS);
}
