/**
 * config.yaml `tool_timeout` reaches the runtime: a worker call that never
 * answers is stopped after the configured seconds, not the 60 s default.
 */
import { expect, it } from "vitest";
import { agentFile, createProject, short, waitFor } from "../helpers/spawn-daemon.js";
import { spawnWorker } from "../workers/helpers.js";

const SCRIPT = `steps:
  - tool_calls:
      - tool: workers/wait_for_abort
        args: { tag: "{{message}}" }
  - text: "done"
`;
const POLICY = `rules:
  - tool: workers/*
    decision: allow
`;

it("a call that never answers is stopped after tool_timeout seconds", async () => {
  const p = await createProject({
    config: (text) => `${text}tool_timeout: 1\n`,
    scripts: { waiter: SCRIPT },
    files: {
      "policies/open.yaml": POLICY,
      "agents/waiter.md": agentFile({ description: "Waits on a worker", model: "waiter", tools: ["workers/*"], policy: "open" }),
    },
  });
  const worker = spawnWorker("tools-worker.ts", { WARDRIK_URL: p.url, WARDRIK_TOKEN: p.token, WORKER_NAME: "w1" });
  try {
    const id = await p.agentId("waiter");
    await waitFor(async () => {
      const agent = await p.apiOk<{ tool_sources: { name: string; status: string; reason?: string }[] }>("GET", `/v1/agents/${id}`);
      return agent.tool_sources.some((s) => s.status === "connected" && s.reason?.includes("wait_for_abort"));
    }, "the worker to register its tools");
    // Well under the 60 s default: only the configured second can end this turn in time.
    const { end, run } = await p.send("waiter", "t1", "main", 30_000);
    expect(short(end.type)).toBe("turn.completed");
    await worker.waitFor((e) => e.event === "aborted" && e.tag === "t1", 10_000);
    const events = await p.events("waiter");
    const ofRun = events.filter((e) => e.run === run);
    // A timeout, recorded as one: not a kill or a plain failure.
    const timedOut = ofRun.find((e) => short(e.type) === "call.timed_out");
    expect(timedOut?.data, "the call timed out").toMatchObject({ tool: "workers/wait_for_abort", timeout_s: 1, code: "timeout" });
    expect(ofRun.filter((e) => /^call\.(killed|failed)$/.test(short(e.type)))).toEqual([]);
  } finally {
    await worker.stop();
  }
});
