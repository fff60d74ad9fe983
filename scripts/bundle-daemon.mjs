// `npm run build`, after tsc and copy-assets: the CLI and the daemon bundled
// into packages/daemon/dist/bundle/, which bin/wardrik.js runs. Node loading
// some 480 modules one file at a time was most of every wardrik process's
// start-up CPU (issues #31, #32); a few files load in a fraction of it.
//
// Three builds:
// - cli.cjs, the command line: main.ts, every command and what their actions
//   need to talk to the daemon (the SDK's client, the protocol's zod-free
//   part, commander), one CommonJS file without code splitting. Node's ES
//   module loader costs a short command more than everything it does: as ES
//   module chunks `wardrik ls` cost about 45 ms of CPU more (#32). The few
//   dynamic imports that reach the daemon's layers or a heavy package stay
//   imports of the other builds' files: `wardrik daemon`'s (daemon-process.ts)
//   a require() of daemon.cjs, the others' (HEAVY: doctor, init, the offline
//   store, config.yaml's full reader, the schemas, eval's suite reader, the MCP
//   proxy) import()s of the ES module build's entries. The CLI shares no state
//   with them: what they import of the CLI (connect.ts's daemonUrl, the client)
//   holds none.
// - daemon.cjs, the daemon: one CommonJS file too. As ES module chunks (35 of
//   them at a start, the CommonJS packages it imports each read by Node's
//   export scanner) an import of the daemon cost 100-130 ms of CPU more than
//   this file's require(), at every start. What the daemon loads only when it
//   needs it stays so: esbuild runs an inlined module reached by import() when
//   the import() runs, and turns every import() of a package into a require()
//   then (`dynamic-import` unsupported), so the optional packages (the MCP SDK,
//   Slack's client, the AI SDK's providers, OpenTelemetry) load on first use,
//   their CommonJS builds, the same copy whichever part of the daemon needs one.
//   Its code nobody calls at a start costs only V8's pre-parse of it.
// - those HEAVY entries, ES modules split into chunks along every dynamic
//   import(), so each loads only what it needs.
// Inlined: the daemon's built JavaScript (dist/), the @wardrik/* packages, hono,
// eventsource-parser, (in cli.cjs) commander, and (in the other builds) zod
// with zod-to-openapi, which extends zod's own classes, and yaml. Loading zod's
// ~100 files (its 50 locales among them) and yaml's ~70 one by one was about a
// fifth of a daemon's start: an import of the daemon took 620-685 ms of CPU with
// them outside and 515-565 ms inside, one after the other on a busy machine. A
// second zod in node_modules, which the MCP SDK and the AI SDK import, is
// harmless: both read a schema through its `_zod` property, not through
// instanceof, and zod keeps its registry and settings on globalThis. The
// CommonJS code inlined into the ES modules gets a `require` of its own (the
// banner). Packages with native code or worker files (better-sqlite3, pino's
// transports, ws's optional addons) stay imports of node_modules. cli.cjs imports
// no package at all (checkCliExternals). Beside the
// files: source maps (back to src/*.ts through tsc's maps; the sources of the
// other packages bundled, which the tarball does not ship, inside the maps) and
// the builds' metafile, meta.json, which says which source module is in which
// file (test/e2e/cli-imports.test.ts reads it), and THIRD-PARTY-LICENSES.txt,
// the licence of every npm package inlined.
//
// dist/index.js (the library) stays unbundled.
import { spawnSync } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { builtinModules } from "node:module";
import { dirname, join, relative, resolve, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const daemon = join(dirname(dirname(fileURLToPath(import.meta.url))), "packages", "daemon");
const outdir = join(daemon, "dist", "bundle");
const INLINE = /^(@wardrik\/|hono$|hono\/|@hono\/|eventsource-parser$)/;
/** What the ES module build inlines besides INLINE (cli.cjs must not need them: checkCliExternals). */
const INLINE_IN_MODULES = /^(zod$|zod\/|@asteasolutions\/zod-to-openapi$|yaml$)/;
/** The CommonJS modules inlined into the ES module build call require() for Node's built-ins: an ES module has none. */
const REQUIRE_BANNER =
  'import { createRequire as __bundleCreateRequire } from "node:module"; const require = __bundleCreateRequire(import.meta.url);';
/** The CLI's dynamic imports (paths under dist/) that cli.cjs leaves to the ES module build: that build's entry names. */
const HEAVY = {
  "cli/doctor.js": "cli/doctor",
  "cli/init-project.js": "cli/init-project",
  "cli/offline-store.js": "cli/offline-store",
  "cli/project-settings.js": "cli/project-settings",
  "secrets/rotate-key.js": "cli/rotate-key",
  "editor-schemas.js": "cli/editor-schemas",
  "cli/eval/suite-file.js": "cli/suite-file",
  "cli/eval/run-suite.js": "cli/run-suite",
  "cli/eval/junit.js": "cli/junit",
  "cli/eval/results-table.js": "cli/results-table",
  "config/yaml-source.js": "cli/yaml-source",
  "cli/mcp-stdio-proxy.js": "cli/mcp-stdio-proxy",
};
/**
 * zod's index exports its 49 locales (z.locales), half of zod's code in the bundle (366 of 751 KB) that Node
 * compiled at every daemon start, for messages in English only: zod sets its English one itself (classic/schemas.js
 * imports locales/en.js), and nothing of Wardrik's sets another. The bundle's z.locales holds `en` alone. A package
 * of node_modules that imports zod (the MCP SDK, the AI SDK) gets its own zod, whole.
 */
const englishZod = {
  name: "zod-english-only",
  setup: (b) =>
    b.onLoad({ filter: /[\\/]node_modules[\\/]zod[\\/]v4[\\/]locales[\\/]index\.js$/ }, () => ({
      contents: 'export { default as en } from "./en.js";',
      loader: "js",
    })),
};
/** The daemon's entry (under dist/), which cli.cjs requires as DAEMON_FILE. */
const DAEMON_ENTRY = "daemon-process.js";
const DAEMON_FILE = "./daemon.cjs";
/** import.meta.url in a CommonJS file: package-dir.ts finds package.json from its own file's URL. */
const FILE_URL = {
  define: { "import.meta.url": "__wardrikFileUrl" },
  banner: { js: 'const __wardrikFileUrl = require("node:url").pathToFileURL(__filename).href;' },
};
const external = {
  name: "node-modules-external",
  setup: (b) =>
    b.onResolve({ filter: /^[^./]/ }, (a) =>
      INLINE.test(a.path) || INLINE_IN_MODULES.test(a.path) ? undefined : { path: a.path, external: true },
    ),
};

rmSync(outdir, { recursive: true, force: true });
/** What both builds share: Node 20, linked source maps with the sources' text, a metafile. */
const BOTH = {
  absWorkingDir: daemon,
  outdir,
  bundle: true,
  platform: "node",
  target: "node20",
  sourcemap: "linked",
  sourcesContent: true,
  metafile: true,
  logLevel: "warning",
};
const modules = await build({
  ...BOTH,
  entryPoints: Object.fromEntries(Object.entries(HEAVY).map(([path, name]) => [name, `dist/${path}`])),
  chunkNames: "chunks/[name]-[hash]",
  splitting: true,
  format: "esm",
  banner: { js: REQUIRE_BANNER },
  plugins: [external, englishZod],
});
const daemonFile = await build({
  ...BOTH,
  ...FILE_URL,
  entryPoints: { daemon: `dist/${DAEMON_ENTRY}` },
  outExtension: { ".js": ".cjs" },
  format: "cjs",
  supported: { "dynamic-import": false },
  plugins: [external, englishZod],
});
const cli = await build({
  ...BOTH,
  ...FILE_URL,
  entryPoints: { cli: "dist/cli/main.js" },
  outExtension: { ".js": ".cjs" },
  format: "cjs",
  plugins: [
    {
      name: "heavy-imports",
      setup(b) {
        b.onResolve({ filter: /^\./ }, (a) => {
          if (a.kind !== "dynamic-import") return undefined;
          const path = relative(join(daemon, "dist"), resolve(a.resolveDir, a.path)).split(sep).join("/");
          // load-daemon.ts requires daemon.cjs beside cli.cjs (with its code cache) and takes this import() only unbundled.
          if (path === DAEMON_ENTRY) return { path: DAEMON_FILE, external: true };
          const entry = HEAVY[path];
          return entry === undefined ? undefined : { path: `./${entry}.js`, external: true };
        });
      },
    },
    {
      name: "cli-externals",
      setup: (b) =>
        b.onResolve({ filter: /^[^./]/ }, (a) =>
          INLINE.test(a.path) || a.path === "commander" ? undefined : { path: a.path, external: true },
        ),
    },
  ],
});
mkdirSync(outdir, { recursive: true });
const builds = [modules, daemonFile, cli];
const metafile = {
  inputs: Object.assign({}, ...builds.map((b) => b.metafile.inputs)),
  outputs: Object.assign({}, ...builds.map((b) => b.metafile.outputs)),
};
writeFileSync(join(outdir, "meta.json"), JSON.stringify(metafile));
checkExternals(metafile);
checkCliExternals(cli.metafile);
writeThirdPartyLicenses(metafile);
for (const file of Object.keys(metafile.outputs).filter((f) => f.endsWith(".map"))) keepForeignSources(join(daemon, file));
writeDaemonCodeCache();

/**
 * daemon.cjs.cache, the V8 code cache `wardrik daemon` requires daemon.cjs with (src/cli/code-cache.ts): made by
 * a daemon started once in a new folder (scripts/daemon-code-cache.mjs), so it holds what a start compiles.
 */
function writeDaemonCodeCache() {
  const env = { ...process.env };
  delete env.NODE_OPTIONS;
  const script = join(dirname(fileURLToPath(import.meta.url)), "daemon-code-cache.mjs");
  const r = spawnSync(process.execPath, [script, join(outdir, "daemon.cjs")], { env, encoding: "utf8" });
  if (r.status !== 0) throw new Error(`The daemon's code cache could not be made:\n${r.stderr}`);
}

/** cli.cjs imports Node's built-ins and the other builds' entries, nothing else: no package is resolved by a short command. */
function checkCliExternals(metafile) {
  const entries = new Set([...Object.values(HEAVY).map((name) => `./${name}.js`), DAEMON_FILE]);
  const others = Object.values(metafile.outputs).flatMap((o) =>
    o.imports.filter((i) => i.external && !entries.has(i.path) && !builtinModules.includes(i.path.replace(/^node:/, ""))),
  );
  if (others.length > 0)
    throw new Error(`cli.cjs imports ${others.map((i) => i.path).join(", ")}: add the dynamic import that reaches it to HEAVY.`);
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
      if (imp.external && !imp.path.startsWith("node:") && !imp.path.startsWith(".")) {
        const name = imp.path.startsWith("@") ? imp.path.split("/").slice(0, 2).join("/") : imp.path.split("/")[0];
        if (!builtinModules.includes(name) && !declared.has(name)) missing.add(name);
      }
  if (missing.size > 0)
    throw new Error(`The bundle imports ${[...missing].join(", ")}, which packages/daemon/package.json does not list in dependencies.`);
}

/** The licence of every package whose code is inlined, beside the files that carry it (their terms ask for it). */
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
