/**
 * `npm run lint:cycles` (part of `npm run lint`) fails on an import cycle
 * between modules of the compiled packages: its very command, pointed at a
 * small dist/ with a cycle, exits non-zero and names the modules; at one
 * without, it passes.
 */
import { exec } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";

const REPO_ROOT = fileURLToPath(new URL("../../", import.meta.url));
const tmp = mkdtempSync(join(tmpdir(), "wardrik-cycles-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const script = (JSON.parse(readFileSync(join(REPO_ROOT, "package.json"), "utf8")) as { scripts: Record<string, string> }).scripts[
  "lint:cycles"
]!;

/** The lint's command with the packages' dist/ folders replaced by `dir`. */
function lintCycles(dir: string): Promise<{ code: number; out: string }> {
  const command = script.replace(/( packages\/[a-z]+\/dist)+$/, ` ${dir}`);
  if (command === script) throw new Error(`lint:cycles no longer ends with the packages' dist/ folders: ${script}`);
  const env = { ...process.env, PATH: `${join(REPO_ROOT, "node_modules", ".bin")}${delimiter}${process.env.PATH ?? ""}` };
  return new Promise((resolve) =>
    exec(command, { cwd: REPO_ROOT, env }, (err, stdout, stderr) => resolve({ code: err ? (err.code ?? 1) : 0, out: stdout + stderr })),
  );
}

function dist(name: string, files: Record<string, string>): string {
  const dir = join(tmp, name, "dist");
  mkdirSync(dir, { recursive: true });
  for (const [file, text] of Object.entries(files)) writeFileSync(join(dir, file), text);
  return dir;
}

// Each run loads madge anew (seconds): both at once.
describe.concurrent("npm run lint:cycles", () => {
  it("fails on a cycle, naming its modules", async () => {
    const r = await lintCycles(
      dist("cycle", {
        "turn-driver.js": `import { step } from "./model-step.js";\nexport const drive = () => step();\n`,
        "model-step.js": `import { drive } from "./turn-driver.js";\nexport const step = () => drive;\n`,
      }),
    );
    expect(r.code).not.toBe(0);
    expect(r.out).toMatch(/model-step\.js > turn-driver\.js|turn-driver\.js > model-step\.js/);
  });

  it("passes without one (a type-only import leaves nothing in the compiled module)", async () => {
    const r = await lintCycles(
      dist("no-cycle", {
        "turn-driver.js": `import { step } from "./model-step.js";\nexport const drive = () => step();\n`,
        "model-step.js": `export const step = () => 1;\n`,
      }),
    );
    expect(r.out).toContain("No circular dependency found");
    expect(r.code).toBe(0);
  });
});
