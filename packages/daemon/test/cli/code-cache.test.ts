/**
 * `wardrik daemon` requires dist/bundle/daemon.cjs with the V8 code cache the
 * build made of it (src/cli/code-cache.ts). A cache is used only for the file
 * it was made from: another file of the same length (V8 checks no more) or a
 * damaged cache compiles as a plain require() would, and the file's own code
 * runs either way.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { codeCacheFile, requireWithCodeCache, writeCodeCache } from "../../src/cli/code-cache.js";

const dir = mkdtempSync(join(tmpdir(), "wardrik-code-cache-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A CommonJS file whose export says which version of it ran; each test its own file (require() loads a file once). */
function moduleFile(name: string, version: string): string {
  const file = join(dir, `${name}.cjs`);
  // Each file's own text: V8 takes a text it compiled before in this process from its own memory, not from a cache.
  writeFileSync(
    file,
    `"use strict";\nconst path = require("node:path");\nmodule.exports = { version: "${version}", name: "${name}", base: path.basename(__filename) };\n`,
  );
  return file;
}

/** The cache of `file` as a first require() makes it, after which `file` is forgotten by require.cache. */
function makeCache(file: string): void {
  const first = requireWithCodeCache(file);
  expect(first.cacheUsed).toBe(false);
  writeCodeCache(file, first.script!);
  const cache = require.cache as Record<string, unknown>;
  delete cache[file];
}

describe("requireWithCodeCache", () => {
  it("uses the cache made from the same file, and gives the file's exports with its own require and __filename", () => {
    const file = moduleFile("same", "v1");
    makeCache(file);
    const again = requireWithCodeCache(file);
    expect(again.cacheUsed).toBe(true);
    expect(again.exports).toEqual({ version: "v1", name: "same", base: "same.cjs" });
    // Once per process, as require() does.
    expect(requireWithCodeCache(file)).toMatchObject({ exports: again.exports, cacheUsed: false });
  });

  it("does not use the cache of another file of the same length", () => {
    const file = moduleFile("changed", "v1");
    makeCache(file);
    moduleFile("changed", "v2");
    const changed = requireWithCodeCache(file);
    expect(changed.cacheUsed).toBe(false);
    expect(changed.exports).toEqual({ version: "v2", name: "changed", base: "changed.cjs" });
  });

  it("a damaged or missing cache: the file compiles and runs without it", () => {
    const damaged = moduleFile("damaged", "v1");
    makeCache(damaged);
    const cache = readFileSync(codeCacheFile(damaged));
    writeFileSync(codeCacheFile(damaged), Buffer.concat([cache.subarray(0, 40), Buffer.alloc(cache.length - 40, 7)]));
    expect(requireWithCodeCache(damaged)).toMatchObject({ cacheUsed: false, exports: { version: "v1" } });
    expect(requireWithCodeCache(moduleFile("none", "v1"))).toMatchObject({ cacheUsed: false, exports: { version: "v1" } });
  });
});
