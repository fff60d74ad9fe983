// `npm run build`, after tsc and copy-assets: the CLI and the daemon bundled
// into packages/daemon/dist/bundle/, which bin/wardrik.js runs. Node loading
// some 480 modules one file at a time was most of every wardrik process's
// start-up CPU (issues #31, #32); a few chunks load in about half of it.
//
// Bundled: the daemon's built JavaScript (dist/), the @wardrik/* packages, hono,
// zod (with zod-to-openapi, which extends zod's own classes), yaml and commander.
// Loading zod's ~100 files and yaml's ~70 one by one was about a third of a
// daemon's start (an import of the daemon, measured one after the other on a busy
// machine: 620-685 ms of CPU with them outside,
// 515-565 ms inside). A second zod in node_modules, which the MCP SDK and the AI SDK
// import, is harmless: both read a schema through its `_zod` property, not through
// instanceof, and zod keeps its registry and settings on globalThis. The bundle's
// CommonJS code (yaml, commander) gets a `require` of its own (the banner). Packages
// with native code or worker files (better-sqlite3, pino's transports, ws's optional
// addons) stay imports of node_modules. Chunks are split along the
// entries and every dynamic import(), so a command still loads only what it
// needs. Beside them: source maps (back to src/*.ts through tsc's maps; the
// sources of the other packages bundled, which the tarball does not ship,
// inside the maps) and esbuild's metafile, meta.json, which says which source module is in which
// chunk (test/e2e/cli-imports.test.ts reads it).
//
// dist/index.js (the library) stays unbundled.
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { builtinModules } from "node:module";
import { dirname, join, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const daemon = join(dirname(dirname(fileURLToPath(import.meta.url))), "packages", "daemon");
const outdir = join(daemon, "dist", "bundle");
const INLINE = /^(@wardrik\/|hono$|hono\/|@hono\/|zod$|zod\/|@asteasolutions\/zod-to-openapi$|yaml$|commander$)/;
/** The CommonJS modules inlined call require() for Node's built-ins: an ES module has none of its own. */
const REQUIRE_BANNER =
  'import { createRequire as __bundleCreateRequire } from "node:module"; const require = __bundleCreateRequire(import.meta.url);';

rmSync(outdir, { recursive: true, force: true });
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
  banner: { js: REQUIRE_BANNER },
  plugins: [
    {
      name: "node-modules-external",
      setup(b) {
        b.onResolve({ filter: /^[^./]/ }, (a) => (INLINE.test(a.path) ? undefined : { path: a.path, external: true }));
      },
    },
  ],
});
mkdirSync(outdir, { recursive: true });
writeFileSync(join(outdir, "meta.json"), JSON.stringify(result.metafile));
checkExternals(result.metafile);
writeThirdPartyLicenses(result.metafile);
for (const file of Object.keys(result.metafile.outputs).filter((f) => f.endsWith(".map"))) keepForeignSources(join(daemon, file));

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

/** The licence of every package whose code is inlined, beside the chunks that carry it (their terms ask for it). */
function writeThirdPartyLicenses(metafile) {
  const packages = new Map();
  for (const input of Object.keys(metafile.inputs)) {
    const match = /(?:^|\/)node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(input);
    if (match) packages.set(match[1], join(daemon, input.slice(0, match.index + match[0].length)));
  }
  const parts = [...packages]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([name, dir]) => {
      const file = readdirSync(dir).find((f) => /^licen[cs]e/i.test(f));
      const { version, license, repository } = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));
      const url = typeof repository === "string" ? repository : repository?.url;
      const text = file
        ? readFileSync(join(dir, file), "utf8").trim()
        : `${license} (the package ships no licence text; see ${url ?? "its repository"})`;
      return `${name} ${version}\n\n${text}\n`;
    });
  writeFileSync(
    join(outdir, "THIRD-PARTY-LICENSES.txt"),
    `The bundle in this folder contains code of these packages, under these terms.\n\n${parts.join("\n---\n\n")}`,
  );
}

/** A map keeps the text of the sources outside this package (protocol, sdk, testing, the npm packages inlined) and drops the rest: src/ ships. */
function keepForeignSources(mapFile) {
  const map = JSON.parse(readFileSync(mapFile, "utf8"));
  map.sourcesContent = map.sources.map((source, i) =>
    resolve(dirname(mapFile), source).startsWith(daemon + sep) ? null : (map.sourcesContent?.[i] ?? null),
  );
  writeFileSync(mapFile, JSON.stringify(map));
}
