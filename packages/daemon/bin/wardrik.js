#!/usr/bin/env node
// Runs the bundle `npm run build` writes (dist/bundle/, scripts/bundle-daemon.mjs): the command line is one
// CommonJS file, cli.cjs, and the daemon ES module chunks it imports when a command needs them. This file is
// CommonJS too (bin/package.json): a command that only talks to the daemon never starts Node's ES module loader,
// which would cost it more than all it does (#32). `wardrik --version` prints package.json's version itself.
"use strict";
const args = process.argv.slice(2);
if (args.length === 1 && (args[0] === "--version" || args[0] === "-V")) {
  // As src/version.ts reads it (through package-dir.ts), without loading the bundle.
  const { version } = JSON.parse(require("node:fs").readFileSync(require("node:path").join(__dirname, "..", "package.json"), "utf8"));
  if (typeof version !== "string") throw new Error("Wardrik cannot read its own version from package.json.");
  process.stdout.write(`${version}\n`);
} else {
  const cli = require("../dist/bundle/cli.cjs");
  // The daemon's stack traces (in its log) name src/*.ts, through the bundle's source maps, each read when a stack
  // first needs it (source-mapped-stacks.ts: Node's own setSourceMapsEnabled reads them all as the modules load, about
  // 65 ms of CPU at every start). A short command prints an error's message alone and goes without.
  if (args[0] === "daemon") cli.mapStackTraces();
  cli.main(process.argv).catch((err) => {
    console.error(err instanceof Error ? err.message : String(err));
    process.exit(1);
  });
}
