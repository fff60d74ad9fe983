#!/usr/bin/env node
// `wardrik --version` alone prints the version without loading the command line's parser (commander):
// most of a short command's CPU is Node loading modules.
const args = process.argv.slice(2);
if (args.length === 1 && (args[0] === "--version" || args[0] === "-V")) {
  const { VERSION } = await import("../dist/version.js");
  process.stdout.write(`${VERSION}\n`);
} else {
  const { main } = await import("../dist/cli/main.js");
  main(process.argv).catch((err) => {
    console.error(err instanceof Error ? err.message : String(err));
    process.exit(1);
  });
}
