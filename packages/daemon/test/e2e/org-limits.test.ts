/**
 * Per-org limits (config.yaml `limits:`) on the real daemon. Past
 * `org_requests_per_s` an org's request is 429 with Retry-After while another
 * org's request goes through; past `org_running_turns` an org's turn waits
 * (its agent shows as queued) and runs once one of the org's turns ends, while
 * another org's turns run meanwhile.
 */
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { expect, it } from "vitest";
import type { AgentSummary } from "@wardrik/protocol";
import { REPO_ROOT, agentFile, cleanupLater, createProject, short, waitFor, type TestProject } from "../helpers/spawn-daemon.js";
import { workerArgs } from "../helpers/worker-bundle.js";

async function orgToken(p: TestProject, org: string): Promise<string> {
  return (await p.apiOk<{ token: string }>("POST", "/v1/tokens", { org })).token;
}

/** The gate worker, serving the config org with the admin token; `open()` lets its waiting calls answer. */
function startGateWorker(p: TestProject): { open(): void } {
  const file = fileURLToPath(new URL("./fixtures/gate-worker.ts", import.meta.url));
  const env: NodeJS.ProcessEnv = { ...process.env, WARDRIK_URL: p.url, WARDRIK_TOKEN: p.token };
  delete env.NODE_OPTIONS;
  const child = spawn(process.execPath, workerArgs(file), {
    cwd: REPO_ROOT,
    env,
    stdio: ["pipe", "ignore", "inherit"],
  });
  cleanupLater(async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((r) => child.once("exit", r));
    child.kill("SIGKILL");
    await exited;
  });
  return { open: () => void child.stdin!.write("open\n") };
}

it("past org_requests_per_s an org's request is 429 with Retry-After; another org's and the admin's go through", async (ctx) => {
  // One request per 100 s: the second of an org is past its budget however slow the machine.
  const p = await createProject({ scope: ctx, config: (init) => `${init}\nlimits:\n  org_requests_per_s: 0.01\n` });
  const acme = await orgToken(p, "acme");
  const beta = await orgToken(p, "beta");

  expect((await p.api("GET", "/v1/agents", undefined, { token: acme })).status).toBe(200);
  const refused = await p.api<{ code: string; detail: string; retryable: boolean }>("GET", "/v1/agents", undefined, {
    token: acme,
  });
  expect(refused.status, refused.text).toBe(429);
  expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
  expect(refused.json).toMatchObject({ code: "rate_limited", retryable: true });
  expect(refused.json.detail).toContain("limits.org_requests_per_s");
  // Refused before anything is done: a message it carried is not queued.
  const post = await p.api("POST", "/v1/agents", { name: "late", description: "x", model: "script/echo" }, { token: acme });
  expect(post.status).toBe(429);

  // Another org has its own budget; the admin token is not counted.
  expect((await p.api("GET", "/v1/agents", undefined, { token: beta })).status).toBe(200);
  for (let i = 0; i < 3; i++) expect((await p.api("GET", "/v1/agents")).status).toBe(200);
  expect((await p.api<{ agents: AgentSummary[] }>("GET", "/v1/agents?name=late")).json.agents).toEqual([]);
});

it("past org_running_turns a turn waits, shown as queued, and runs once one of the org's turns ends; another org's turns run meanwhile", async (ctx) => {
  const p = await createProject({
    scope: ctx,
    config: (init) => `${init}\nlimits:\n  org_running_turns: 1\n`,
    scripts: { gated: 'steps:\n  - tool_calls: [{ tool: "workers/wait_for_gate", args: {} }]\n  - text: "through the gate"\n' },
    files: {
      "agents/holder.md": agentFile({ description: "Holds the org's one place", model: "gated", tools: ["workers/*"] }),
      "agents/waiter.md": agentFile({ description: "Waits for it", model: "script/echo" }),
    },
  });
  const gate = startGateWorker(p);
  const beta = await orgToken(p, "beta");
  const other = await p.api<AgentSummary>(
    "POST",
    "/v1/agents",
    { name: "other", description: "Another org's", model: "script/echo" },
    { token: beta },
  );
  expect(other.status, other.text).toBe(201);

  const holder = await p.agentId("holder");
  const waiter = await p.agentId("waiter");
  await waitFor(async () => {
    const a = await p.apiOk<{ tool_sources?: { status: string; reason?: string }[] }>("GET", `/v1/agents/${holder}`);
    return (a.tool_sources ?? []).some((s) => s.status === "connected" && (s.reason ?? "").includes("wait_for_gate")) || undefined;
  }, "the gate worker to connect");
  await p.apiOk("POST", `/v1/agents/${holder}/messages`, { text: "hold" });
  await p.waitForEvent(holder, (e) => short(e.type) === "call.started");

  const queued = await p.apiOk<{ message: string }>("POST", `/v1/agents/${waiter}/messages`, { text: "my turn?" });
  const status = async () => (await p.apiOk<{ agents: AgentSummary[] }>("GET", "/v1/agents?name=waiter")).agents[0]!.status;
  await waitFor(async () => (await status()) === "queued", "waiter to show as queued");
  expect((await p.apiOk<AgentSummary>("GET", `/v1/agents/${waiter}`)).status).toBe("queued");

  // Another org's turn is not held up by this org's limit.
  const sent = await p.api<{ message: string }>("POST", `/v1/agents/${other.json.id}/messages`, { text: "hello" }, { token: beta });
  expect(sent.status, sent.text).toBe(202);
  await waitFor(async () => {
    const r = await p.api<{ events: { type: string }[] }>("GET", `/v1/agents/${other.json.id}/events`, undefined, { token: beta });
    return r.json.events.some((e) => short(e.type) === "turn.completed") || undefined;
  }, "the other org's turn to complete");

  // Meanwhile the waiting turn has not started: its message is queued, nothing more.
  const before = await p.events(waiter);
  expect(before.map((e) => short(e.type))).not.toContain("turn.started");
  expect(before.some((e) => short(e.type) === "message.queued" && e.data.message === queued.message)).toBe(true);
  expect(await status()).toBe("queued");

  gate.open();
  const done = await p.waitForEvent(holder, (e) => short(e.type) === "turn.completed");
  expect(done.data.reply).toBe("through the gate");
  const end = await p.waitForEvent(waiter, (e) => short(e.type) === "turn.completed");
  expect(end.data.reply).toBe("You said: my turn?");
  expect(await status()).toBe("idle");
});
