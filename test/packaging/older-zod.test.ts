/**
 * A project on an older zod 4 minor installs the packed SDK and keeps its own
 * zod (a peer, not a nested copy), and the seed pages' tool examples, copied
 * as written, type-check there under moduleResolution node16 and bundler and
 * register at run time.
 */
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, test } from "vitest";
import { REPO_ROOT, assertBuilt, exec, npmInstall, outsideEnv, packAll, readJson, tarballOf } from "./pack-helpers.js";

/** The oldest zod 4 line: the peer range claims it. */
const OLDER_ZOD = "4.0.17";
const require = createRequire(import.meta.url);
const TSC = require.resolve("typescript/bin/tsc");
const TSX_LOADER = require.resolve("tsx");

let tmp: string;
let project: string;

beforeAll(async () => {
  assertBuilt();
  tmp = mkdtempSync(join(tmpdir(), "wardrik-older-zod-"));
  const packed = await packAll(join(tmp, "dist"));
  project = join(tmp, "app");
  mkdirSync(join(project, "src"), { recursive: true });
  writeFileSync(join(project, "package.json"), JSON.stringify({ name: "app", private: true, type: "module" }));
  await npmInstall(project, [
    tarballOf(packed, "@wardrik/protocol"),
    tarballOf(packed, "@wardrik/sdk"),
    tarballOf(packed, "@wardrik/testing"),
    `zod@${OLDER_ZOD}`,
  ]);
  cpSync(join(REPO_ROOT, "packages", "sdk", "test", "seed-examples"), join(project, "src"), { recursive: true });
}, 600_000);
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

test("the project keeps its own zod: one copy, the older minor", () => {
  expect(readJson<{ version: string }>(join(project, "node_modules", "zod", "package.json")).version).toBe(OLDER_ZOD);
  for (const pkg of ["sdk", "protocol", "testing"]) {
    const nested = join(project, "node_modules", "@wardrik", pkg, "node_modules");
    const names = (() => {
      try {
        return readdirSync(nested);
      } catch {
        return [];
      }
    })();
    expect(names, `@wardrik/${pkg} must not bring its own zod`).not.toContain("zod");
  }
});

test.each([
  ["node16", { module: "node16", moduleResolution: "node16" }],
  ["bundler", { module: "esnext", moduleResolution: "bundler" }],
])("the seed examples type-check against the packed SDK (moduleResolution %s)", async (name, resolution) => {
  const config = {
    compilerOptions: { target: "ES2022", strict: true, noEmit: true, skipLibCheck: false, types: [], ...resolution },
    files: ["src/examples.ts", "src/data-helpers.ts"],
  };
  writeFileSync(join(project, `tsconfig.${name}.json`), JSON.stringify(config));
  const r = await exec(process.execPath, [TSC, "-p", `tsconfig.${name}.json`], { cwd: project }).catch((err: Error) => ({
    code: 1,
    stdout: err.message,
    stderr: "",
  }));
  expect(r.stdout).toBe("");
  expect(r.code).toBe(0);
});

test("at run time every seed example registers, and runTool works, on the older zod", async () => {
  writeFileSync(
    join(project, "src", "check.ts"),
    `import { Wardrik } from "@wardrik/sdk";
import { runTool } from "@wardrik/testing";
import { z } from "zod";
import { seedExamples } from "./examples.js";

const warnings: string[] = [];
for (const example of seedExamples) {
  example.register(new Wardrik({ url: "http://127.0.0.1:1", token: "t", onWarning: (m) => warnings.push(m) }));
}
const input = z.object({ a: z.string().default("x"), n: z.string().transform(Number) });
const out = await runTool({ name: "t", input, run: (args) => args }, { n: "3" });
console.log(JSON.stringify({ warnings, out, zod: (await import("zod/package.json", { with: { type: "json" } })).default.version }));
`,
  );
  const r = await exec(process.execPath, ["--import", TSX_LOADER, "src/check.ts"], { cwd: project, env: outsideEnv() });
  expect(JSON.parse(r.stdout)).toEqual({ warnings: [], out: { a: "x", n: 3 }, zod: OLDER_ZOD });
});
