/**
 * The layer rules of eslint.config.js fire: the repository's own ESLint
 * config lints small files placed (by path) in a layer's folder, each
 * importing something that layer must not reach. The graph they come from
 * covers every folder of packages/daemon/src and is the README's. Only the import rule runs,
 * without type information, so no file has to exist on disk.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { ESLint } from "eslint";
import { describe, expect, it } from "vitest";

const REPO_ROOT = fileURLToPath(new URL("../../", import.meta.url));
const SRC = "packages/daemon/src";

/** The daemon's dependency graph as eslint.config.js writes it down. */
const { DAEMON_GRAPH: graph } = (await import(join(REPO_ROOT, "eslint.config.js"))) as { DAEMON_GRAPH: Record<string, string[]> };

const eslint = new ESLint({
  cwd: REPO_ROOT,
  ruleFilter: ({ ruleId }) => ruleId === "no-restricted-imports",
  overrideConfig: { languageOptions: { parserOptions: { project: null } } },
});

/** The no-restricted-imports messages for `code` as the file at `path` (relative to the repository). */
async function importErrors(path: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: join(REPO_ROOT, path) });
  return result!.messages.map((m) => `${m.ruleId ?? "parse"}: ${m.message}`);
}

describe("layer rules", () => {
  it.each([
    [
      "cluster/ importing http/",
      `${SRC}/cluster/fixture.ts`,
      `import { RouteTable } from "../http/route-table.js";\nvoid RouteTable;\n`,
      /cluster\/ may import .* not .*\bhttp\b/,
    ],
    [
      "cluster/ importing the daemon",
      `${SRC}/cluster/fixture.ts`,
      `import { startDaemon } from "../daemon.js";\nvoid startDaemon;\n`,
      /cluster\/ may import .* not .*the daemon's assembly/,
    ],
    [
      "runtime/ importing cluster/",
      `${SRC}/runtime/fixture.ts`,
      `import { EventRelay } from "../cluster/event-relay.js";\nvoid EventRelay;\n`,
      /runtime\/ may import .* not .*\bcluster\b/,
    ],
    [
      "store/ importing cluster/",
      `${SRC}/store/fixture.ts`,
      `import { EventRelay } from "../cluster/event-relay.js";\nvoid EventRelay;\n`,
      /store\/ may import events, secrets and the shared files, not .*\bcluster\b/,
    ],
    [
      "a nested runtime file importing cluster/",
      `${SRC}/runtime/sub/fixture.ts`,
      `import type { NodeOwnership } from "../../cluster/node-ownership.js";\nexport type Y = NodeOwnership;\n`,
      /runtime\/ may import .* not .*\bcluster\b/,
    ],
    [
      "a bench importing the daemon's src/",
      "bench/fixture.ts",
      `import { decide } from "../packages/daemon/src/policy/index.js";\nvoid decide;\n`,
      /Import the package, not its src\//,
    ],
    [
      "log/ importing config/ (the bottom imports no other folder)",
      `${SRC}/log/fixture.ts`,
      `import { CONFIG_FILE } from "../config/config-file.js";\nvoid CONFIG_FILE;\n`,
      /log\/ may import no other folder and the shared files/,
    ],
    [
      "webhooks/ importing runtime/",
      `${SRC}/webhooks/fixture.ts`,
      `import { Runtime } from "../runtime/runtime.js";\nvoid Runtime;\n`,
      /webhooks\/ may import .* not .*\bruntime\b/,
    ],
    [
      "metrics/ importing http/",
      `${SRC}/metrics/fixture.ts`,
      `import { RouteTable } from "../http/route-table.js";\nvoid RouteTable;\n`,
      /metrics\/ may import .* not .*\bhttp\b/,
    ],
    [
      "telemetry/ importing the daemon's assembly",
      `${SRC}/telemetry/fixture.ts`,
      `import { openProject } from "../open-project.js";\nvoid openProject;\n`,
      /telemetry\/ may import .* not .*the daemon's assembly/,
    ],
  ])("%s is an error", async (_what, path, code, message) => {
    const errors = await importErrors(path, code);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(/^no-restricted-imports: /);
    expect(errors[0]).toMatch(message);
  });

  it("cluster/ may import runtime, store, tools, events and the shared folders", async () => {
    const code = [
      `import { Runtime } from "../runtime/runtime.js";`,
      `import { Store } from "../store/store.js";`,
      `import type { Toolset } from "../tools/toolset.js";`,
      `import { EventBus } from "../events/event-bus.js";`,
      `import type { Logger } from "../log/logger.js";`,
      `export type Used = [Runtime, Store, Toolset, EventBus, Logger];`,
      "",
    ].join("\n");
    expect(await importErrors(`${SRC}/cluster/fixture.ts`, code)).toEqual([]);
  });
  it("names every folder of packages/daemon/src in the graph, and no folder that is not there", () => {
    const folders = readdirSync(join(REPO_ROOT, SRC), { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => e.name)
      .sort();
    expect(Object.keys(graph).sort()).toEqual(folders);
    for (const [folder, allowed] of Object.entries(graph)) for (const a of allowed) expect(folders, `${folder} -> ${a}`).toContain(a);
  });

  it("is the graph the README's Architecture section shows", () => {
    const readme = readFileSync(join(REPO_ROOT, "README.md"), "utf8");
    const section = readme.slice(readme.indexOf("## Architecture"), readme.indexOf("### A turn"));
    const rows = [...section.matchAll(/^\| `([a-z-]+)\/` +\| ([^|]+?) +\|$/gm)].map((m) => {
      const names = m[2]!.replace(", and the daemon's assembly", "").trim();
      return [m[1]!, names === "nothing" ? [] : names.split(", ")] as const;
    });
    expect(Object.fromEntries(rows)).toEqual(graph);
  });

  it("nothing switches the import rule off: bench/policy.ts uses the package's exports", async () => {
    const files = ["packages", "bench", "test", "scripts"].flatMap((dir) =>
      readdirSync(join(REPO_ROOT, dir), { recursive: true, encoding: "utf8" })
        .map((f) => `${dir}/${f}`)
        .filter((f) => /\.tsx?$/.test(f) && !/node_modules|\/dist\//.test(f)),
    );
    expect(files.length).toBeGreaterThan(100);
    // Spelt in two parts so this file does not find itself.
    const switchOff = new RegExp(["eslint", "-disable[^\\n]*no-restricted-imports"].join(""));
    const disabling = files.filter((f) => switchOff.test(readFileSync(join(REPO_ROOT, f), "utf8")));
    expect(disabling).toEqual([]);
    expect(readFileSync(join(REPO_ROOT, "bench/policy.ts"), "utf8")).toMatch(/from "wardrik";/);
  });
});
