/**
 * The daemon's stack traces name its sources (src/*.ts) through the bundle's
 * source maps, read when a stack first needs them (source-mapped-stacks.ts)
 * instead of Node's own setSourceMapsEnabled, which reads every map at start:
 * the stacks of errors thrown in the built bundle (the daemon's code, an inlined
 * package, Node's own, a constructor) are the ones Node's source maps give.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";

const PRINT_STACKS = fileURLToPath(new URL("./fixtures/print-stacks.mjs", import.meta.url));
const SRC = fileURLToPath(new URL("../../src/", import.meta.url));
const project = mkdtempSync(join(tmpdir(), "wardrik-stacks-"));
afterAll(() => rmSync(project, { recursive: true, force: true }));

function stacks(mode: "node" | "lazy"): string {
  const r = spawnSync(process.execPath, [PRINT_STACKS, mode, project], { encoding: "utf8" });
  expect(r.status, r.stderr).toBe(0);
  return r.stdout;
}

describe("stack traces of the bundle", () => {
  it("name src/*.ts as Node's own source maps do, frame for frame", () => {
    // A config.yaml that is not YAML: the daemon's start throws from its config reader.
    writeFileSync(join(project, "config.yaml"), "org: [\n");
    const lazy = stacks("lazy");
    expect(lazy).toBe(stacks("node"));
    expect(lazy).toContain(`at Module.parseYamlSource (${SRC}config/yaml-source.ts:`);
    expect(lazy).toContain(`at openProject (${SRC}open-project.ts:`);
    expect(lazy).toMatch(/at parseDocument2? \(.*\/node_modules\/yaml\/dist\/public-api\.js:\d+:\d+\)/);
    expect(lazy).toContain("TypeError [ERR_INVALID_ARG_TYPE]: ");
    expect(lazy).toMatch(/at new Thrower \(/);
    expect(lazy).not.toContain("dist/bundle/");
  });
});
