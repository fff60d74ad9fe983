/**
 * `wardrik ask` says which tool runs and how each call ended, with a real
 * worker process: a call that times out is named with its timeout.
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { agentFile, createProject, waitFor, type TestProject } from "../helpers/spawn-daemon.js";
import { spawnWorker, type WorkerProcess } from "../workers/helpers.js";

const SCRIPT = `steps:
  - tool_calls:
      - tool: workers/wait_for_abort
        args: { tag: "{{message}}" }
  - text: "done"
`;
let p: TestProject;
let worker: WorkerProcess;

beforeAll(async () => {
  p = await createProject({
    config: (text) => `${text}tool_timeout: 1\n`,
    scripts: { waiter: SCRIPT },
    files: {
      "policies/open.yaml": "rules:\n  - tool: workers/*\n    decision: allow\n",
      "agents/waiter.md": agentFile({ description: "Waits on a worker", model: "waiter", tools: ["workers/*"], policy: "open" }),
    },
  });
  worker = spawnWorker("tools-worker.ts", { WARDRIK_URL: p.url, WARDRIK_TOKEN: p.token, WORKER_NAME: "w1" });
  const id = await p.agentId("waiter");
  await waitFor(async () => {
    const agent = await p.apiOk<{ tool_sources: { status: string; reason?: string }[] }>("GET", `/v1/agents/${id}`);
    return agent.tool_sources.some((s) => s.status === "connected" && s.reason?.includes("wait_for_abort"));
  }, "the worker to register its tools");
});
afterAll(() => worker.stop());

it("a tool call that times out: its start and its timeout, each on a line of its own", async () => {
  const r = await p.cli(["ask", "waiter", "t1"]);
  expect(r.code, r.stderr).toBe(0);
  expect(r.stdout).toBe("done\n");
  const lines = r.stderr.split("\n").filter(Boolean);
  const started = lines.findIndex((l) => /^→ workers\/wait_for_abort \(call_[0-9A-Z]{26}\)$/.test(l));
  expect(started, r.stderr).toBeGreaterThanOrEqual(0);
  expect(lines.slice(started + 1)).toContain("✗ workers/wait_for_abort timed out after 1 s");
  expect(lines.at(-1)).toMatch(/^✓ completed in /);
});
