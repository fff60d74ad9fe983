import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { initProject } from "../../src/cli/init-project.js";
import { startDaemon, type Daemon } from "../../src/daemon.js";

const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f();
});

async function project(files: Record<string, string>): Promise<{ d: Daemon; token: string }> {
  const base = mkdtempSync(join(tmpdir(), "wardrik-refs-"));
  cleanup.push(() => rmSync(base, { recursive: true, force: true }));
  const dir = join(base, "p");
  initProject(dir);
  for (const [path, text] of Object.entries(files)) writeFileSync(join(dir, path), text);
  const d = await startDaemon(dir, { port: 0, log: () => undefined });
  cleanup.push(() => d.close());
  return { d, token: readFileSync(join(dir, ".wardrik", "admin-token"), "utf8").trim() };
}

async function agents(d: Daemon, token: string): Promise<{ name: string; status: string; reason?: string }[]> {
  const res = await fetch(`${d.url}/v1/agents`, { headers: { authorization: `Bearer ${token}` } });
  return ((await res.json()) as { agents: { name: string; status: string; reason?: string }[] }).agents;
}

describe("what an agent file names", () => {
  it("a missing or invalid policy, or an unknown model, makes only that agent unreadable, with the reason", async () => {
    const { d, token } = await project({
      "agents/nopolicy.md": "---\ndescription: x\npolicy: ghost\n---\nhi\n",
      "agents/badpolicy.md": "---\ndescription: x\npolicy: broken\n---\nhi\n",
      "agents/nomodel.md": "---\ndescription: x\nmodel: nowhere/model-x\n---\nhi\n",
      "policies/broken.yaml": "rules:\n  - tool: files/*\n    decision: maybe\n",
    });
    const byName = Object.fromEntries((await agents(d, token)).map((a) => [a.name, a]));
    expect(byName.helper!.status).toBe("idle");
    expect(byName.nopolicy).toMatchObject({
      status: "unreadable",
      reason: expect.stringMatching(/agents\/nopolicy.md:3: policy "ghost" does not exist/),
    });
    expect(byName.badpolicy).toMatchObject({
      status: "unreadable",
      reason: expect.stringMatching(/policies\/broken.yaml:3: rules\[0\].decision must be one of allow, ask, deny/),
    });
    expect(byName.nomodel).toMatchObject({
      status: "unreadable",
      reason: expect.stringMatching(/agents\/nomodel.md:3: model "nowhere\/model-x"/),
    });
  });
});
