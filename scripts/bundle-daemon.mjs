// `npm run build`, after tsc and copy-assets: the CLI and the daemon bundled
// into packages/daemon/dist/bundle/, which bin/wardrik.js runs. Node loading
// some 480 modules one file at a time was most of every wardrik process's
// start-up CPU (issues #31, #32); a few chunks load in about half of it.
//
// Bundled: the daemon's built JavaScript (dist/), the @wardrik/* packages, hono,
// eventsource-parser (the SDK client's event-stream reader) and commander, which
// every CLI command loads: as a package it is eight CommonJS files, resolved
// through its package.json's exports and scanned for their names, some 20 ms of
// CPU (#32). Being CommonJS, it is first bundled alone into an ES module whose
// require() is createRequire's (commanderAsEsm), for Node's built-ins; the
// metafile still names it node_modules/commander/esm.mjs. Every
// other package stays an import of node_modules: zod must be the one instance
// @modelcontextprotocol/sdk and the AI SDK share, and other CommonJS packages
// (yaml, ws) are loaded only by commands that need them. Chunks are split along the
// entries and every dynamic import(), so a command still loads only what it
// needs. Beside them: source maps (back to src/*.ts through tsc's maps; the
// sources of the other packages bundled, which the tarball does not ship,
// inside the maps) and esbuild's metafile, meta.json, which says which source module is in which
// chunk (test/e2e/cli-imports.test.ts reads it).
//
// dist/index.js (the library) stays unbundled.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { builtinModules } from "node:module";
import { dirname, join, resolve, sep } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { build } from "esbuild";

const daemon = join(dirname(dirname(fileURLToPath(import.meta.url))), "packages", "daemon");
const outdir = join(daemon, "dist", "bundle");
const INLINE = /^(@wardrik\/|hono$|hono\/|@hono\/|eventsource-parser$)/;

rmSync(outdir, { recursive: true, force: true });
const commander = await commanderAsEsm();
const result = await build({
  absWorkingDir: daemon,
  entryPoints: { main: "dist/cli/main.js", daemon: "dist/daemon.js", version: "dist/version.js" },
  outdir,
  chunkNames: "chunks/[name]-[hash]",
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20",
  sourcemap: "linked",
  sourcesContent: true,
  metafile: true,
  logLevel: "warning",
  plugins: [
    {
      name: "node-modules-external",
      setup(b) {
        b.onResolve({ filter: /^commander$/ }, () => ({ path: commander.path }));
        b.onLoad({ filter: /[\\/]commander[\\/]esm\.mjs$/ }, () => ({ contents: commander.contents, loader: "js", resolveDir: dirname(commander.path) }));
        b.onResolve({ filter: /^[^./]/ }, (a) => (INLINE.test(a.path) ? undefined : { path: a.path, external: true }));
      },
    },
  ],
});
mkdirSync(outdir, { recursive: true });
writeFileSync(join(outdir, "meta.json"), JSON.stringify(result.metafile));
checkExternals(result.metafile);
for (const file of Object.keys(result.metafile.outputs).filter((f) => f.endsWith(".map"))) keepForeignSources(join(daemon, file));

/**
 * commander (CommonJS) as one ES module, for the build above to inline in place
 * of its ES module wrapper (esm.mjs, whose path it keeps): its require() of
 * Node's built-ins, which an ES module has not, is createRequire's.
 */
async function commanderAsEsm() {
  const path = fileURLToPath(import.meta.resolve("commander", pathToFileURL(join(daemon, "package.json")).href));
  const esm = await build({
    absWorkingDir: daemon,
    entryPoints: [path],
    bundle: true,
    write: false,
    format: "esm",
    platform: "node",
    target: "node20",
    sourcemap: "inline",
    sourcesContent: true,
    logLevel: "warning",
    banner: { js: 'import { createRequire } from "node:module";\nconst require = createRequire(import.meta.url);' },
  });
  return { path, contents: esm.outputFiles[0].text };
}

/**
 * Every package the bundle still imports must be a dependency of `wardrik` itself: the code inlined from
 * @wardrik/* and hono brings its own imports, which before the bundle resolved from the package that declared
 * them and now resolve from node_modules/wardrik (under pnpm, or with another version hoisted, they would not).
 */
function checkExternals(metafile) {
  const pkg = JSON.parse(readFileSync(join(daemon, "package.json"), "utf8"));
  const declared = new Set([...Object.keys(pkg.dependencies ?? {}), ...Object.keys(pkg.optionalDependencies ?? {})]);
  const missing = new Set();
  for (const output of Object.values(metafile.outputs))
    for (const imp of output.imports)
      if (imp.external && !imp.path.startsWith("node:")) {
        const name = imp.path.startsWith("@") ? imp.path.split("/").slice(0, 2).join("/") : imp.path.split("/")[0];
        if (!builtinModules.includes(name) && !declared.has(name)) missing.add(name);
      }
  if (missing.size > 0)
    throw new Error(`The bundle imports ${[...missing].join(", ")}, which packages/daemon/package.json does not list in dependencies.`);
}

/** A map keeps the text of the sources outside this package (protocol, sdk, testing, hono) and drops the rest: src/ ships. */
function keepForeignSources(mapFile) {
  const map = JSON.parse(readFileSync(mapFile, "utf8"));
  map.sourcesContent = map.sources.map((source, i) =>
    resolve(dirname(mapFile), source).startsWith(daemon + sep) ? null : (map.sourcesContent?.[i] ?? null),
  );
  writeFileSync(mapFile, JSON.stringify(map));
}
