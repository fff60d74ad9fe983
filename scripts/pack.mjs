// `npm run pack`: installable tarballs of every public package, for installing
// Wardrik outside this checkout (`npm install -g --allow-scripts=better-sqlite3 ./dist/*.tgz`). Run after
// `npm run build` (the npm script does both).
//
//   node scripts/pack.mjs [--out DIR]     (default: dist/ at the repository root)
//
// Prints one JSON line per tarball: {"name", "version", "file"}.
import { execFileSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, readdirSync, rmSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath } from "node:url";

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const PUBLIC_PACKAGES = ["packages/protocol", "packages/sdk", "packages/testing", "packages/daemon"];

const outFlag = process.argv.indexOf("--out");
const out = resolve(outFlag >= 0 && process.argv[outFlag + 1] ? process.argv[outFlag + 1] : join(root, "dist"));
mkdirSync(out, { recursive: true });

for (const pkg of PUBLIC_PACKAGES) checkBuilt(join(root, pkg));

const npm = process.platform === "win32" ? "npm.cmd" : "npm";
const pack = (packages) => {
  const args = ["pack", "--json", "--pack-destination", out, ...packages.flatMap((p) => ["--workspace", p])];
  return JSON.parse(execFileSync(npm, args, { cwd: root, encoding: "utf8", stdio: ["ignore", "pipe", "inherit"] }));
};
const DAEMON = "packages/daemon";
const libraries = pack(PUBLIC_PACKAGES.filter((p) => p !== DAEMON));
// The CLI carries the SDK's tarball and the protocol's (which the SDK needs): `wardrik init` copies them into a
// new project, whose `npm install` then works although the packages are not on the npm registry.
const bundled = join(root, DAEMON, "sdk-tarballs");
rmSync(bundled, { recursive: true, force: true });
mkdirSync(bundled);
for (const p of libraries.filter((l) => l.name === "@wardrik/sdk" || l.name === "@wardrik/protocol")) {
  copyFileSync(join(out, p.filename), join(bundled, p.filename));
}
let daemon;
try {
  daemon = pack([DAEMON]);
} finally {
  rmSync(bundled, { recursive: true, force: true });
}
for (const p of [...libraries, ...daemon]) console.log(JSON.stringify({ name: p.name, version: p.version, file: join(out, p.filename) }));

/**
 * A tarball must hold this checkout's build: dist/ must exist, and output
 * whose source is gone (left by an older build; tsc -b never deletes it) is
 * removed rather than shipped.
 */
function checkBuilt(dir) {
  const dist = join(dir, "dist");
  if (!existsSync(dist)) fail(`${relative(root, dist)} does not exist: run \`npm run build\` first (or \`npm run pack\`, which builds).`);
  for (const file of walk(dist)) {
    // The web console's bundle (built by packages/console into the daemon's dist/console) and the CLI's bundle
    // (dist/bundle, scripts/bundle-daemon.mjs) have no source of their own in src/.
    if (/^(console|bundle)\//.test(relative(dist, file))) continue;
    const stem = /^(.*)\.(js|js\.map|d\.ts|d\.ts\.map)$/.exec(relative(dist, file))?.[1];
    if (stem === undefined || existsSync(join(dir, "src", `${stem}.ts`))) continue;
    rmSync(file, { force: true });
    console.error(`npm run pack: removed ${relative(root, file)}, left by an older build (its source is gone).`);
  }
}

function* walk(dir) {
  for (const name of readdirSync(dir)) {
    if (name.startsWith(".")) continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) yield* walk(path);
    else yield path;
  }
}

function fail(message) {
  console.error(`npm run pack: ${message}`);
  process.exit(1);
}
