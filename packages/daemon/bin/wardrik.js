#!/usr/bin/env node
// Runs the bundle `npm run build` writes (dist/bundle/, scripts/bundle-daemon.mjs): the daemon loads some 40
// of its files instead of some 320 modules of dist/ and the @wardrik/* packages, a third less CPU at its start.
// `wardrik --version` alone prints the version without loading the command line's parser (commander).
const args = process.argv.slice(2);
if (args.length === 1 && (args[0] === "--version" || args[0] === "-V")) {
  const { VERSION } = await import("../dist/bundle/version.js");
  process.stdout.write(`${VERSION}\n`);
} else {
  // The daemon's stack traces (in its log) name src/*.ts, through the bundle's source maps: about 25 ms more
  // CPU at its start. A short command prints an error's message alone and goes without.
  if (args[0] === "daemon") process.setSourceMapsEnabled(true);
  const { main } = await import("../dist/bundle/main.js");
  main(process.argv).catch((err) => {
    console.error(err instanceof Error ? err.message : String(err));
    process.exit(1);
  });
}
