/**
 * A short command loads only what it needs: `wardrik --version`, `--help` and
 * `wardrik ls` against a running daemon load none of the daemon's own
 * modules (store, runtime, HTTP server, config schemas, policies), no native
 * addon, no zod, no YAML parser and not fetch (undici: node:http instead). Most of such a command's CPU is Node
 * loading modules (the `cli` benchmark measures it). The modules are recorded
 * with a loader hook (fixtures/record-modules.mjs) in the real built CLI, which
 * runs the bundle (dist/bundle/): the command line is one CommonJS file,
 * cli.cjs, and what a command needs of the daemon's layers is in ES module
 * chunks it imports then; each file loaded stands for the modules esbuild put
 * in it (its metafile, helpers/bundle-sources.ts), and the rules below hold on
 * those. The daemon itself runs from the bundle too, one CommonJS file (daemon.cjs).
 *
 * The CLI remembers what it read from config.yaml (.wardrik/cli-settings.json):
 * an edit to the file is read in full again, with its warnings.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { inBundle, sourceModules } from "../helpers/bundle-sources.js";
import { createProject, runWardrik, type TestProject } from "../helpers/spawn-daemon.js";

const RECORDER = fileURLToPath(new URL("./fixtures/record-modules.mjs", import.meta.url));
const tmp = mkdtempSync(join(tmpdir(), "wardrik-e2e-imports-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** What no short command may load: the daemon's layers, native addons, the schema and YAML libraries, fetch (undici). */
const HEAVY = [
  /\/dist\/(store|runtime|http|policy|models|tools|cluster|webhooks|triggers|slack|telemetry|metrics|events|agent-mcp)\//,
  /\/dist\/config\/(?!config-file\.js$)/,
  /\/dist\/(daemon|open-project|editor-schemas)\.js$/,
  /\/protocol\/dist\/index\.js$/,
  /\.node$/,
  /^node:internal\/deps\/undici\//,
  /\/node_modules\/(better-sqlite3|pg|kysely|zod|yaml|hono|@hono|ws|pino|@modelcontextprotocol|@ai-sdk|ai|@opentelemetry)\//,
];

let run = 0;
/** The recorder's environment, writing to a new file; and a reader of that file (every module loaded, once each). */
function recorder(): { env: Record<string, string>; loaded: () => string[] } {
  const log = join(tmp, `modules-${++run}.txt`);
  return {
    env: { NODE_OPTIONS: `--import=${RECORDER}`, WARDRIK_MODULE_LOG: log },
    loaded: () => [...new Set(readFileSync(log, "utf8").split("\n").filter(Boolean))],
  };
}

/**
 * Runs `wardrik ARGS` in `cwd` with the module recorder; returns the result, the files it loaded (`chunks`: of the
 * bundle, node_modules, Node) and `modules`: the same with each chunk replaced by the source modules in it.
 */
async function recorded(
  args: string[],
  cwd: string,
): Promise<{ code: number | null; stdout: string; stderr: string; chunks: string[]; modules: string[] }> {
  const rec = recorder();
  const r = await runWardrik(args, { cwd, env: rec.env });
  const chunks = rec.loaded();
  return { ...r, chunks, modules: sourceModules(chunks) };
}

const heavy = (modules: string[]) => modules.filter((m) => HEAVY.some((h) => h.test(m)));
/** The packages of node_modules among `modules`, by name. */
const packagesOf = (modules: string[]) => [
  ...new Set(modules.flatMap((m) => /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(m)?.[1] ?? []).filter((p) => !p.startsWith("@wardrik/"))),
];
/** How many modules define the commands (main.ts, COMMANDS: one each, secret-rotate.js apart). */
const COMMAND_MODULES = 22;
/** The command modules among `modules`, as commands/NAME.js. */
const commandModules = (modules: string[]) =>
  modules.filter((m) => /\/dist\/cli\/commands\//.test(m)).map((m) => m.replace(/.*\/dist\/cli\//, ""));
/** The files of the daemon package a process loaded (not Node's built-ins), as paths under packages/daemon/. */
const packageFiles = (chunks: string[]) => chunks.filter((m) => /\/daemon\/(dist|bin)\//.test(m)).map((m) => m.replace(/.*\/daemon\//, ""));
/** The command line's own two files: a command that only talks to the daemon loads no other (no ES module chunk). */
const CLI_FILES = ["bin/wardrik.js", "dist/bundle/cli.cjs"];

let p: TestProject;
beforeAll(async () => {
  p = await createProject();
});

describe("what a short command loads", () => {
  it("wardrik --version: the version alone, not even the command line's parser, nothing of the daemon", async () => {
    const r = await recorded(["--version"], tmp);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
    expect(heavy(r.modules)).toEqual([]);
    expect(r.modules.filter((m) => m.includes("/node_modules/") || /\/dist\/cli\//.test(m))).toEqual([]);
    // Not even the other commands, or the client.
    expect(r.modules.filter((m) => /\/dist\/cli\/(commands\/|connect|daemon-client)/.test(m))).toEqual([]);
  });

  it("wardrik ls against the running daemon: cli.cjs alone (every command, the client), no daemon module", async () => {
    // The first command after config.yaml changes reads it in full (and remembers what it read).
    const first = await recorded(["ls"], p.dir);
    expect(first.code, first.stderr).toBe(0);
    const r = await recorded(["ls"], p.dir);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^NAME +STATUS +DESCRIPTION\nhelper +idle/);
    expect(heavy(r.modules)).toEqual([]);
    // Two files: bin/wardrik.js and cli.cjs, which holds every command and the client. No ES module chunk (Node's ES
    // module loader alone costs a short command more than all it does) and no file of node_modules: commander and the
    // client's event-stream reader are inside cli.cjs (a package is resolved through its package.json, and commander is
    // eight CommonJS files).
    expect(packageFiles(r.chunks)).toEqual(CLI_FILES);
    expect(r.chunks.filter((m) => m.includes("/node_modules/"))).toEqual([]);
    expect(packagesOf(r.modules).sort()).toEqual(["commander", "eventsource-parser"]);
    expect(commandModules(r.modules)).toHaveLength(COMMAND_MODULES);
    // node:crypto costs a short command more than its own reading: the memo of config.yaml is keyed without it.
    expect(r.modules).not.toContain("node:crypto");
    // Of the protocol only its zod-free part (@wardrik/protocol/base and /errors), never its index, which loads zod (HEAVY).
    expect(
      r.modules
        .filter((m) => m.includes("/protocol/dist/"))
        .map((m) => m.replace(/.*\/protocol\/dist\//, ""))
        .sort(),
    ).toEqual(["base.js", "errors.js", "events.js", "failure-codes.js", "ids.js", "lost-answer.js", "safe-text.js", "trace-context.js"]);
    // The client is the SDK's browser-safe one (@wardrik/sdk/client) with its event-stream reader, over the CLI's
    // node:http transport; not the SDK's worker half (ws, files) and no client of the CLI's own.
    const sdk = r.modules.filter((m) => m.includes("/sdk/dist/")).map((m) => m.replace(/.*\/sdk\/dist\//, ""));
    expect(sdk.sort()).toEqual(["client-core.js", "client-entry.js", "client.js", "sse.js", "transport.js"]);
    expect(
      r.modules
        .filter((m) => /\/dist\/cli\/(parse-sse|http-request|daemon-client)\.js$/.test(m))
        .map((m) => m.replace(/.*\/cli\//, ""))
        .sort(),
    ).toEqual(["daemon-client.js", "http-request.js"]);
  });

  it("every command that talks to the daemon loads cli.cjs alone, none of the daemon's modules", async () => {
    // [arguments, the command's module]; in this order: history and events read the conversation ask leaves.
    const commands: [string[], string][] = [
      [["ask", "helper", "hi"], "ask"],
      [["agent", "show", "helper"], "agent"],
      [["tools", "helper"], "tools"],
      [["history", "helper"], "history"],
      [["events", "helper"], "events"],
      // fork and replay share one module; they read the turn ask left.
      [["fork", "helper", "--at", "1", "--as", "imports-fork"], "time-machine"],
      [["replay", "helper", "--turns", "1"], "time-machine"],
      [["deny", "helper", "call_none"], "approvals"],
      [["deliveries"], "deliveries"],
      [["nodes"], "nodes"],
      [["reload"], "reload"],
      [["token", "default"], "token"],
      [["secret", "ls"], "secret"],
      [["mcp", "ls"], "mcp"],
      [["console", "--no-open"], "console"],
    ];
    for (const [args, module] of commands) {
      const r = await recorded(args, p.dir);
      // deny of a call that does not exist is refused by the daemon: the CLI got that far.
      if (module === "approvals") expect(r.stderr, args.join(" ")).toMatch(/call_none/);
      else expect(r.code, `${args.join(" ")}: ${r.stderr}`).toBe(0);
      expect(heavy(r.modules), args.join(" ")).toEqual([]);
      // cli.cjs alone: its own module is in it, and nothing it needs is an ES module chunk of the daemon's layers.
      expect(packageFiles(r.chunks), args.join(" ")).toEqual(CLI_FILES);
      expect(commandModules(r.modules), args.join(" ")).toContain(`commands/${module}.js`);
    }
  });

  it("wardrik eval loads its own module and the suite file's reader (YAML, zod), none of the daemon's layers", async () => {
    p.write("evals/imports.yaml", "agent: helper\ncases:\n  - name: answers\n    message: hi\n    expect: { status: completed }\n");
    const r = await recorded(["eval", "evals/imports.yaml"], p.dir);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("1 of 1 case(s) passed");
    // A suite file is YAML checked with zod, its mistakes reported as config.yaml's are: that reader, and nothing else heavy.
    const suiteReader = /\/node_modules\/(zod|yaml)\/|\/dist\/config\/(yaml-source|read-with-schema|did-you-mean)\.js$/;
    expect(heavy(r.modules).filter((m) => !suiteReader.test(m))).toEqual([]);
    // The reader is an ES module chunk (bundle/cli/suite-file.js) cli.cjs imports then: the other commands load none of it.
    expect(packageFiles(r.chunks)).toContain("dist/bundle/cli/suite-file.js");
  });

  it("wardrik schema prints the shipped schema: no zod, no config module", async () => {
    const r = await recorded(["schema", "config"], tmp);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ title: "Wardrik config.yaml" });
    expect(heavy(r.modules)).toEqual([]);
  });

  it("--help lists every command from cli.cjs alone: nothing of the daemon", async () => {
    const r = await recorded(["--help"], tmp);
    expect(r.code, r.stderr).toBe(0);
    for (const name of ["init", "daemon", "ask", "ls", "agent", "fork", "replay", "eval", "secret", "mcp", "completion"])
      expect(r.stdout).toMatch(new RegExp(`\\n  ${name}\\b`));
    expect(heavy(r.modules)).toEqual([]);
    // Every command's module (commander needs each definition to list it), in cli.cjs; doctor's checks, init's files,
    // the daemon are ES module chunks a command's action imports (HEAVY holds none of them here).
    expect(commandModules(r.modules)).toHaveLength(COMMAND_MODULES);
    expect(packageFiles(r.chunks)).toEqual(CLI_FILES);
    expect(r.chunks.filter((m) => m.includes("/node_modules/"))).toEqual([]);
  });

  it("a completion script, made from every command's definition, loads no more than --help", async () => {
    const r = await recorded(["completion", "bash"], tmp);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("wardrik");
    expect(heavy(r.modules)).toEqual([]);
    expect(packageFiles(r.chunks)).toEqual(CLI_FILES);
  });

  it("a mistyped command is still told the nearest one", async () => {
    const r = await runWardrik(["lss"], { cwd: tmp });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/Did you mean ls\?/);
  });
});

describe("the daemon runs from the bundle", () => {
  it("wardrik daemon loads cli.cjs and daemon.cjs, no module of dist/ itself and no ES module chunk; the store and HTTP server are in daemon.cjs", async () => {
    const rec = recorder();
    // What the daemon process loads: a spawned one (the file's other daemon, a target of CLI commands, runs in the test process).
    const d = await createProject({ env: rec.env, process: "spawned" });
    try {
      expect((await d.cli(["ls"])).code).toBe(0);
      const chunks = rec.loaded();
      const ownFiles = chunks.filter((m) => /\/packages\/(daemon|protocol|sdk|testing)\//.test(m) && !m.includes("/node_modules/"));
      expect(ownFiles.filter((m) => !inBundle(m)).map((m) => m.replace(/.*\/packages\//, ""))).toEqual(["daemon/bin/wardrik.js"]);
      // The daemon is one CommonJS file, required: as ES module chunks its start cost 100-130 ms of CPU more
      // (Node's ES module loader, and its scan of every CommonJS package the chunks import for their exports).
      expect(packageFiles(chunks)).toEqual([...CLI_FILES, "dist/bundle/daemon.cjs"]);
      // Fewer files than the modules they hold: the point of the bundle.
      const modules = sourceModules(chunks);
      expect(modules.filter((m) => /\/daemon\/dist\/store\/migrate\.js$/.test(m))).toHaveLength(1);
      expect(modules.filter((m) => /\/daemon\/dist\/http\//.test(m)).length).toBeGreaterThan(10);
      expect(ownFiles.length * 3).toBeLessThan(modules.filter((m) => /\/packages\/(daemon|protocol|sdk|testing)\/dist\//.test(m)).length);
    } finally {
      await d.stop();
    }
  });
});

describe("the daemon's code cache", () => {
  it("wardrik daemon compiles daemon.cjs from the code cache the build made of it", async () => {
    // The command's own start (bin/wardrik.js, cli.cjs, then daemon.cjs): a process of its own.
    const d = await createProject({ env: { WARDRIK_LOG_LEVEL: "debug" }, process: "spawned" });
    try {
      const loaded = d
        .daemonStderr()
        .split("\n")
        .filter((l) => l.includes('"daemon code loaded"'))
        .map((l) => JSON.parse(l) as { file: string; code_cache: boolean });
      expect(loaded).toEqual([expect.objectContaining({ file: expect.stringMatching(/\/dist\/bundle\/daemon\.cjs$/), code_cache: true })]);
    } finally {
      await d.stop();
    }
  });
});

describe("the CLI's memo of config.yaml", () => {
  it("an edit is read in full: a mistake elsewhere warns on every command until fixed; a new address is used", async () => {
    const good = p.read("config.yaml");
    try {
      p.write("config.yaml", good + "\nmodles: {}\n");
      for (let i = 0; i < 2; i++) {
        const r = await p.cli(["ls", "--json"]);
        expect(r.code, r.stderr).toBe(0);
        expect(r.stderr).toMatch(/^warning: config\.yaml:\d+: .*modles.*\n$/);
      }
      p.write("config.yaml", good);
      const fixed = await p.cli(["ls", "--json"]);
      expect(fixed.code, fixed.stderr).toBe(0);
      expect(fixed.stderr).toBe("");
      // Another port in config.yaml: the CLI reads it, not the remembered one; the running daemon's
      // daemon.json still outranks it (connect.ts, daemonUrl), and the CLI says the two differ.
      p.write("config.yaml", good.replace(/^listen:.*$/m, "listen: 127.0.0.1:9"));
      const moved = await p.cli(["ls"]);
      expect(moved.code, moved.stderr).toBe(0);
      expect(moved.stderr).toMatch(/not at config\.yaml's http:\/\/127\.0\.0\.1:9\b/);
    } finally {
      p.write("config.yaml", good);
    }
  });

  it("the memo follows the environment variables config.yaml names", async () => {
    const good = p.read("config.yaml");
    try {
      p.write("config.yaml", good.replace(/^listen:.*$/m, "listen: ${env:WARDRIK_TEST_LISTEN}"));
      const there = await p.cli(["ls", "--json"], { env: { WARDRIK_TEST_LISTEN: `127.0.0.1:${p.port}` } });
      expect(there.code, there.stderr).toBe(0);
      expect(there.stderr).toBe("");
      const elsewhere = await p.cli(["ls"], { env: { WARDRIK_TEST_LISTEN: "127.0.0.1:9" } });
      expect(elsewhere.code, elsewhere.stderr).toBe(0);
      expect(elsewhere.stderr).toMatch(/not at config\.yaml's http:\/\/127\.0\.0\.1:9\b/);
    } finally {
      p.write("config.yaml", good);
    }
  });

  it("holds no database URL", async () => {
    await p.cli(["ls"]);
    const memo = p.read(".wardrik/cli-settings.json");
    expect(memo).not.toMatch(/database|sqlite|postgres/);
    expect(JSON.parse(memo)).toEqual({ key: expect.any(String), address: { org: "default", listen: { host: "127.0.0.1", port: p.port } } });
  });
});
