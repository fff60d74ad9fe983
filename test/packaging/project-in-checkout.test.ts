/**
 * A project made with `wardrik init` inside the checkout (the old quick start:
 * `npx wardrik init demo` at the repository root) is its owner's code: eslint
 * and prettier leave it alone, so `npm run lint` keeps passing.
 */
import { execFileSync } from "node:child_process";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { ESLint } from "eslint";
import * as prettier from "prettier";
import { afterAll, expect, test } from "vitest";
import { REPO_ROOT, assertBuilt, filesUnder } from "./pack-helpers.js";

const dir = join(REPO_ROOT, `wardrik-init-in-checkout-${process.pid}`);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

test("eslint and prettier ignore every file of a project made inside the checkout, and still check the repository's own", async () => {
  assertBuilt();
  execFileSync(process.execPath, [join(REPO_ROOT, "packages", "daemon", "bin", "wardrik.js"), "init", dir], { cwd: REPO_ROOT });
  const files = filesUnder(dir).map((f) => join(dir, f));
  expect(files.map((f) => f.slice(dir.length + 1))).toEqual(
    expect.arrayContaining(["workers/tools.ts", "package.json", "agents/helper.md"]),
  );

  const eslint = new ESLint({ cwd: REPO_ROOT });
  const ignorePath = join(REPO_ROOT, ".prettierignore");
  const linted: string[] = [];
  for (const file of files) {
    if (!(await eslint.isPathIgnored(file))) linted.push(`eslint: ${file}`);
    if (!(await prettier.getFileInfo(file, { ignorePath })).ignored) linted.push(`prettier: ${file}`);
  }
  expect(linted).toEqual([]);

  for (const own of [
    "packages/sdk/src/index.ts",
    "test/packaging/project-in-checkout.test.ts",
    "scripts/pack.mjs",
    "README.md",
    "package.json",
  ]) {
    const file = join(REPO_ROOT, own);
    expect((await prettier.getFileInfo(file, { ignorePath })).ignored, own).toBe(false);
    if (own.endsWith(".ts")) expect(await eslint.isPathIgnored(file), own).toBe(false);
  }
});
