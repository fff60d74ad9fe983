#!/usr/bin/env node
// Runs the bundle `npm run build` writes (dist/bundle/, scripts/bundle-daemon.mjs): the daemon loads some 40
// of its files instead of some 320 modules of dist/ and the @wardrik/* packages, a third less CPU at its start.
// This file is CommonJS (bin/package.json): Node starts a CommonJS entry without its ES module loader, so
// `wardrik --version`, which prints package.json's version itself, costs Node's own start and little more; every
// other command loads the bundle's ES modules with import(), which starts that loader then (#32).
"use strict";
const args = process.argv.slice(2);
if (args.length === 1 && (args[0] === "--version" || args[0] === "-V")) {
  // As src/version.ts reads it (through package-dir.ts), without loading the bundle.
  const { version } = JSON.parse(require("node:fs").readFileSync(require("node:path").join(__dirname, "..", "package.json"), "utf8"));
  if (typeof version !== "string") throw new Error("Wardrik cannot read its own version from package.json.");
  process.stdout.write(`${version}\n`);
} else {
  // The daemon's stack traces (in its log) name src/*.ts, through the bundle's source maps: about 25 ms more
  // CPU at its start. A short command prints an error's message alone and goes without.
  if (args[0] === "daemon") process.setSourceMapsEnabled(true);
  import("../dist/bundle/main.js").then(({ main }) =>
    main(process.argv).catch((err) => {
      console.error(err instanceof Error ? err.message : String(err));
      process.exit(1);
    }),
  );
}
