/**
 * `wardrik doctor`: a project whose checks all pass (its daemon runs, a
 * worker serves its worker tools) exits 0; each kind of mistake is named with
 * what to fix and makes it exit 1: agent files, policies, scripts, a model
 * without an API key, no worker, no daemon; outside a project it says so.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentFile, createProject, runWardrik, waitFor, type TestProject } from "../helpers/spawn-daemon.js";
import { spawnWorker, type WorkerProcess } from "../workers/helpers.js";

interface Report {
  ok: boolean;
  dir: string;
  checks: { name: string; level: "ok" | "warn" | "fail"; detail: string; fix?: string }[];
}

let p: TestProject;
let worker: WorkerProcess;
const NO_KEYS = { OPENAI_API_KEY: undefined, ANTHROPIC_API_KEY: undefined };
const doctor = async () => {
  const r = await p.cli(["doctor", "--json"], { env: NO_KEYS });
  return { code: r.code, report: JSON.parse(r.stdout) as Report };
};
const failed = (r: Report) => r.checks.filter((c) => c.level === "fail").map((c) => c.name);

beforeAll(async () => {
  p = await createProject({ env: NO_KEYS });
  worker = spawnWorker("tools-worker.ts", { WARDRIK_URL: p.url, WARDRIK_TOKEN: p.token, WORKER_NAME: "w1" });
  // Asked of the API: a CLI process per look cost a node start each time.
  const helper = await p.agentId("helper");
  await waitFor(
    async () => JSON.stringify(await p.apiOk("GET", `/v1/agents/${helper}/tools`)).includes("workers/find_order"),
    "the worker",
    30_000,
  );
});
afterAll(() => worker.stop());

describe("wardrik doctor", () => {
  it("a healthy project, its daemon running and its worker connected: every check passes, exit 0", async () => {
    const r = await p.cli(["doctor"], { env: NO_KEYS });
    expect(r.code, r.stdout).toBe(0);
    expect(r.stdout).toContain(`Checking the project in ${p.dir}`);
    for (const line of [
      /^✓ config\.yaml: org default, listen 127\.0\.0\.1:\d+, 1 model\(s\)$/m,
      /^✓ policies\/: 1 policy read$/m,
      /^✓ scripts\/: 1 script read$/m,
      /^✓ agents\/: 1 of 1 agent file\(s\) usable$/m,
      /^✓ daemon: answers at http:\/\/127\.0\.0\.1:\d+ \(version [\d.]+\)$/m,
      /^✓ database: in use by the running daemon$/m,
      /^✓ workers: every worker tool pattern is served$/m,
      /^Nothing to fix\.$/m,
    ])
      expect(r.stdout).toMatch(line);
  });

  it("names every mistake with what to fix, and exits 1", async () => {
    p.write("agents/broken.md", "---\ndescription: Typos\nmodle: demo\nmax_iterations: 0\n---\nHi.\n");
    p.write("agents/keyless.md", agentFile({ description: "A real provider", model: "openai/gpt-4o-mini" }));
    p.write("policies/loose.yaml", "rules:\n  - tool: files/*\n    decision: maybe\n");
    p.write("scripts/odd.yaml", "steps:\n  - txet: hi\n");
    await p.apiOk("POST", "/v1/reload", {});
    await worker.stop();
    const { code, report } = await doctor();
    expect(code).toBe(1);
    expect(report.ok).toBe(false);
    expect(failed(report).sort()).toEqual(["agents/broken.md", "model of keyless", "policies/loose.yaml", "scripts/odd.yaml", "workers"]);
    const check = (name: string) => report.checks.find((c) => c.name === name)!;
    expect(check("agents/broken.md").detail.split("\n")).toEqual([
      expect.stringMatching(/^agents\/broken\.md:3: key "modle" is not allowed: did you mean "model"\?/),
      "agents/broken.md:4: max_iterations must be a positive integer",
    ]);
    expect(check("agents/broken.md").fix).toBe("fix the file, then wardrik reload");
    expect(check("model of keyless").detail).toMatch(/^Model "openai\/gpt-4o-mini" has no API key: set OPENAI_API_KEY/);
    expect(check("policies/loose.yaml").detail).toMatch(/decision/);
    expect(check("scripts/odd.yaml").detail).toMatch(/txet/);
    expect(check("workers")).toMatchObject({
      detail: expect.stringContaining("helper: workers/*"),
      fix: expect.stringContaining("npm run worker"),
    });

    const text = await p.cli(["doctor"], { env: NO_KEYS });
    expect(text.code).toBe(1);
    expect(text.stdout).toMatch(/^✗ agents\/broken\.md: agents\/broken\.md:3: key "modle"/m);
    expect(text.stdout).toMatch(/^ {4}agents\/broken\.md:4: max_iterations must be a positive integer$/m);
    expect(text.stdout).toMatch(/^ {4}fix: fix the file, then wardrik reload$/m);
    expect(text.stdout).toMatch(/^5 things to fix\.$/m);
  });

  it("with no daemon running: says so, and checks the database file itself", async () => {
    for (const f of ["agents/broken.md", "agents/keyless.md", "policies/loose.yaml", "scripts/odd.yaml"]) p.remove(f);
    await p.stop();
    const { code, report } = await doctor();
    expect(code).toBe(1);
    expect(failed(report)).toEqual(["daemon"]);
    const daemon = report.checks.find((c) => c.name === "daemon")!;
    expect(daemon.detail).toMatch(/^no daemon answers at http:\/\/127\.0\.0\.1:\d+$/);
    expect(daemon.fix).toBe(`start it: wardrik daemon (in ${p.dir})`);
    expect(report.checks.find((c) => c.name === "database")).toMatchObject({
      level: "ok",
      detail: expect.stringMatching(/ opens \(schema \d+\)$/),
    });
  });

  it("outside a project: says there is none and how to make one (exit 1)", async () => {
    const tmp = mkdtempSync(join(tmpdir(), "wardrik-doctor-"));
    try {
      const r = await runWardrik(["doctor"], { cwd: tmp });
      expect(r.code).toBe(1);
      expect(r.stdout).toContain(
        `✗ project: no Wardrik project in ${tmp} or above it (no config.yaml)\n    fix: wardrik init DIR makes one`,
      );
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  });
});
