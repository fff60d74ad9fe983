import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { initProject } from "../../src/cli/init-project.js";
import { startDaemon, type Daemon } from "../../src/daemon.js";

let d: Daemon;
let base: string;
let admin: string;

beforeAll(async () => {
  base = mkdtempSync(join(tmpdir(), "wardrik-orgs-"));
  initProject(join(base, "p"));
  d = await startDaemon(join(base, "p"), { port: 0, log: () => undefined });
  admin = readFileSync(join(base, "p", ".wardrik", "admin-token"), "utf8").trim();
});
afterAll(async () => {
  await d.close();
  rmSync(base, { recursive: true, force: true });
});

async function call(token: string, method: string, path: string, body?: unknown) {
  const res = await fetch(d.url + path, {
    method,
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

describe("orgs", () => {
  it("a token of one org can neither read nor change another org's agents, nor learn they exist", async () => {
    const made = await call(admin, "POST", "/v1/tokens", { org: "acme", name: "acme ci" });
    expect(made.status).toBe(201);
    const acme = String(made.json.token);

    const spy = await call(acme, "POST", "/v1/agents", {
      name: "helper",
      description: "acme's own helper",
      model: "demo",
      tools: ["files"],
    });
    expect(spy.status).toBe(201);
    expect(spy.json.org).toBe("acme");
    const spyId = String(spy.json.id);

    const adminAgents = (await call(admin, "GET", "/v1/agents")).json.agents as { id: string; org: string }[];
    const acmeAgents = (await call(acme, "GET", "/v1/agents")).json.agents as { id: string; org: string }[];
    expect(adminAgents.every((a) => a.org === "default")).toBe(true);
    expect(acmeAgents.map((a) => a.id)).toEqual([spyId]);
    const helperId = adminAgents[0]!.id;

    // Another org's agent answers exactly like an agent that does not exist.
    const unknown = await call(acme, "GET", "/v1/agents/agt_01JF8X5RQ2M3V9ZK0B7Y4T6WHN");
    for (const [method, path, body] of [
      ["GET", `/v1/agents/${helperId}`, undefined],
      ["POST", `/v1/agents/${helperId}/messages`, { text: "hi" }],
      ["GET", `/v1/agents/${helperId}/events`, undefined],
      ["POST", `/v1/agents/${helperId}/cancel`, {}],
      ["DELETE", `/v1/agents/${helperId}`, undefined],
    ] as const) {
      const r = await call(acme, method, path, body);
      expect(r.status).toBe(404);
      expect(String(r.json.detail).replace(helperId, "ID")).toBe(
        String(unknown.json.detail).replace("agt_01JF8X5RQ2M3V9ZK0B7Y4T6WHN", "ID"),
      );
    }
    expect((await call(admin, "GET", `/v1/agents/${spyId}`)).status).toBe(404);

    // Only the admin token makes tokens; the project's reload belongs to its own org.
    expect((await call(acme, "POST", "/v1/tokens", { org: "default" })).status).toBe(403);
    expect((await call(acme, "POST", "/v1/reload", {})).status).toBe(404);

    // Each org's agent runs on its own.
    const q = await call(acme, "POST", `/v1/agents/${spyId}/messages`, { text: "acme question" });
    expect(q.status).toBe(202);
    for (let i = 0; i < 100; i++) {
      const ev = (await call(acme, "GET", `/v1/agents/${spyId}/events`)).json.events as { type: string }[];
      if (ev.some((e) => e.type === "dev.wardrik.turn.completed")) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    const ev = (await call(acme, "GET", `/v1/agents/${spyId}/events`)).json.events as { type: string; source: string }[];
    expect(ev.some((e) => e.type === "dev.wardrik.turn.completed")).toBe(true);
    expect(ev.every((e) => e.source.startsWith("/orgs/acme/"))).toBe(true);
  });
});
