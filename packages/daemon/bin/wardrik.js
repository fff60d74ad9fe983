#!/usr/bin/env node
// Runs the bundle `npm run build` writes (dist/bundle/, scripts/bundle-daemon.mjs): a few chunks load in
// about half the CPU of the ~480 modules of dist/, and most of a short command's CPU is Node loading modules.
// `wardrik --version` alone prints the version without loading the command line's parser (commander).
const args = process.argv.slice(2);
if (args.length === 1 && (args[0] === "--version" || args[0] === "-V")) {
  const { VERSION } = await import("../dist/bundle/version.js");
  process.stdout.write(`${VERSION}\n`);
} else {
  const { main } = await import("../dist/bundle/main.js");
  main(process.argv).catch((err) => {
    console.error(err instanceof Error ? err.message : String(err));
    process.exit(1);
  });
}
