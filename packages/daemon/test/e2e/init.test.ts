/** `wardrik init`: the project layout it writes, and refusing a non-empty directory. */
import { execFile } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { REPO_ROOT, runWardrik } from "../helpers/spawn-daemon.js";

const run = promisify(execFile);

const tmp = mkdtempSync(join(tmpdir(), "wardrik-e2e-init-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe.concurrent("wardrik init", () => {
  it("writes config.yaml, an example agent, a policy, a worker file and an owner-only admin token", async () => {
    const r = await runWardrik(["init", "demo"], { cwd: tmp });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    const dir = join(tmp, "demo");
    for (const f of ["config.yaml", "agents/helper.md", "workers/tools.ts", ".wardrik/admin-token"]) {
      expect(existsSync(join(dir, f)), f).toBe(true);
      expect(r.stdout).toContain(f);
    }
    expect(statSync(join(dir, "policies")).isDirectory()).toBe(true);
    expect(readdirSync(join(dir, "policies")).filter((f) => f.endsWith(".yaml")).length).toBeGreaterThan(0);

    const config = readFileSync(join(dir, "config.yaml"), "utf8");
    expect(config).toMatch(/^listen:/m);
    expect(config).toMatch(/^model:/m);

    const agent = readFileSync(join(dir, "agents/helper.md"), "utf8");
    expect(agent.startsWith("---\n")).toBe(true);
    expect(agent).toMatch(/^description: .+/m);
    expect(agent).toMatch(/^tools: .*files/m);

    const tokenPath = join(dir, ".wardrik", "admin-token");
    expect(statSync(tokenPath).mode & 0o777).toBe(0o600);
    expect(statSync(join(dir, ".wardrik")).mode & 0o077).toBe(0);
    const token = readFileSync(tokenPath, "utf8").trim();
    expect(token.length).toBeGreaterThanOrEqual(20);

    // A second project gets a different token.
    const r2 = await runWardrik(["init", "demo2"], { cwd: tmp });
    expect(r2.code).toBe(0);
    expect(readFileSync(join(tmp, "demo2", ".wardrik", "admin-token"), "utf8").trim()).not.toBe(token);
  });

  it("writes its own package.json (ESM, the SDK of the CLI's version, zod, tsx, npm run worker) and the demo model's script", async () => {
    const r = await runWardrik(["init", "My Agents"], { cwd: tmp });
    expect(r.code).toBe(0);
    const dir = join(tmp, "My Agents");
    const version = (await runWardrik(["--version"], { cwd: tmp })).stdout.trim();
    const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as Record<string, Record<string, string> | string | boolean>;
    expect(pkg).toMatchObject({ name: "my-agents", private: true, type: "module", scripts: { worker: "tsx workers/tools.ts" } });
    // @wardrik/protocol ships the JSON Schemas that config.yaml's and the agents' $schema lines point at.
    expect(pkg.dependencies).toEqual({
      "@wardrik/sdk": version,
      "@wardrik/protocol": version,
      tsx: expect.any(String),
      zod: expect.any(String),
    });
    expect(readFileSync(join(dir, ".gitignore"), "utf8")).toContain("node_modules/");
    // The worker finds this project's daemon without WARDRIK_URL / WARDRIK_TOKEN.
    const worker = readFileSync(join(dir, "workers", "tools.ts"), "utf8");
    expect(worker).toContain('readFileSync(".wardrik/admin-token"');
    expect(worker).toContain('readFileSync("config.yaml"');
    // The demo model plays the project's script, which calls the worker's tools when asked about an order.
    const script = readFileSync(join(dir, "scripts", "demo.yaml"), "utf8");
    expect(script).toMatch(/tool: workers\/find_order/);
    expect(script).toMatch(/tool: workers\/refund_order/);
    // Run from a checkout, the CLI has no SDK tarballs beside it: the Next lines give the exact commands.
    const dist = join(REPO_ROOT, "dist").replace(/\/+$/, "");
    const root = REPO_ROOT.replace(/\/+$/, "");
    expect(r.stdout).toContain(
      `  (cd ${root} && npm run pack) && npm install ${dist}/wardrik-protocol-${version}.tgz ${dist}/wardrik-sdk-${version}.tgz && npm run worker\n`,
    );
    expect(r.stdout).not.toMatch(/^Worker tools: npm install && npm run worker/m);
  });

  it("--sdk-from DIR: the SDK's tarballs are copied to vendor/ and named with file:, and npm install installs them", async () => {
    const version = (await runWardrik(["--version"], { cwd: tmp })).stdout.trim();
    const from = join(tmp, "packed");
    mkdirSync(from);
    const npmArgs = ["pack", "--pack-destination", from, "--workspace", "packages/protocol", "--workspace", "packages/sdk"];
    await run("npm", npmArgs, { cwd: REPO_ROOT });
    const r = await runWardrik(["init", "vendored", "--sdk-from", from], { cwd: tmp });
    expect(r.code, r.stderr).toBe(0);
    const dir = join(tmp, "vendored");
    const pkg = JSON.parse(readFileSync(join(dir, "package.json"), "utf8")) as { dependencies: Record<string, string> };
    expect(pkg.dependencies).toMatchObject({
      "@wardrik/protocol": `file:vendor/wardrik-protocol-${version}.tgz`,
      "@wardrik/sdk": `file:vendor/wardrik-sdk-${version}.tgz`,
    });
    expect(readdirSync(join(dir, "vendor")).sort()).toEqual([`wardrik-protocol-${version}.tgz`, `wardrik-sdk-${version}.tgz`]);
    expect(r.stdout).toContain("Worker tools: npm install && npm run worker (the SDK installs from vendor/)");
    // The project installs as it is, with nothing from the npm registry that is not there.
    const env = { ...process.env };
    for (const key of Object.keys(env)) if (key.startsWith("npm_")) delete env[key];
    await run("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund"], { cwd: dir, env, timeout: 600_000 });
    const installed = JSON.parse(readFileSync(join(dir, "node_modules", "@wardrik", "sdk", "package.json"), "utf8")) as { version: string };
    expect(installed.version).toBe(version);
  }, 600_000);

  it("--sdk-from a folder without the tarballs: says which files it needs (exit 1) and writes nothing", async () => {
    const empty = join(tmp, "no-tarballs");
    mkdirSync(empty);
    const r = await runWardrik(["init", "never", "--sdk-from", empty], { cwd: tmp });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/--sdk-from .*no-tarballs: wardrik-protocol-[\d.]+\.tgz and wardrik-sdk-[\d.]+\.tgz are not both there/);
    expect(existsSync(join(tmp, "never"))).toBe(false);
  });

  it("accepts an existing empty directory", async () => {
    const dir = join(tmp, "empty");
    mkdirSync(dir);
    const r = await runWardrik(["init", dir], { cwd: tmp });
    expect(r.code).toBe(0);
    expect(existsSync(join(dir, "config.yaml"))).toBe(true);
  });

  it("refuses a non-empty directory, says why, and leaves it untouched", async () => {
    const dir = join(tmp, "busy");
    mkdirSync(dir);
    writeFileSync(join(dir, "notes.txt"), "mine");
    const r = await runWardrik(["init", dir], { cwd: tmp });
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("");
    expect(r.stderr).toMatch(/not empty/);
    expect(r.stderr).toContain(dir);
    expect(readdirSync(dir)).toEqual(["notes.txt"]);
    expect(readFileSync(join(dir, "notes.txt"), "utf8")).toBe("mine");
  });

  it("outside a project, without WARDRIK_URL, the CLI says what is missing (exit 1)", async () => {
    const outside = join(tmp, "nowhere");
    mkdirSync(outside);
    const r = await runWardrik(["ls"], { cwd: outside });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/Not inside a Wardrik project/);
    expect(r.stderr).toMatch(/WARDRIK_URL/);
  });
});
