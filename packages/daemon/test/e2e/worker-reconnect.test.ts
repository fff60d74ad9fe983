/**
 * A daemon restart with a worker connected: SIGTERM the real daemon, start it
 * again on the same port, and the same worker process (the SDK's default
 * settings) reconnects by itself and serves the next call.
 */
import { fileURLToPath } from "node:url";
import { expect, it } from "vitest";
import { startFixtureWorker } from "../helpers/fixture-worker.js";
import { agentFile, createProject, short, waitFor, type TestProject } from "../helpers/spawn-daemon.js";

const SCRIPT = `steps:
  - tool_calls:
      - tool: workers/find_order
        args: { order_id: "{{message}}" }
  - text: "Found {{result}}"
`;

function startWorker(p: TestProject): ReturnType<typeof startFixtureWorker> {
  return startFixtureWorker(p, fileURLToPath(new URL("./fixtures/order-worker.ts", import.meta.url)));
}

/** Whether the worker is connected and serves find_order, as the agent's details list it. */
async function served(p: TestProject): Promise<boolean> {
  const id = await p.agentId("orders");
  const agent = await p.apiOk<{ tool_sources?: { status: string; reason?: string }[] }>("GET", `/v1/agents/${id}`);
  return (agent.tool_sources ?? []).some((s) => s.status === "connected" && (s.reason ?? "").includes("find_order"));
}

it("after SIGTERM and a restart on the same port, the worker reconnects by itself and serves calls again", async () => {
  const p = await createProject({
    scripts: { lookup: SCRIPT },
    files: { "agents/orders.md": agentFile({ description: "Looks up orders.", model: "lookup", tools: ["workers/*"] }) },
  });
  const worker = startWorker(p);
  await waitFor(() => served(p), `the worker to register; its output: ${worker.output()}`, 30_000);
  const before = await p.send("orders", "ord_1");
  expect(short(before.end.type)).toBe("turn.completed");
  const port = p.port;

  // SIGTERM; a daemon that does not exit within 8 s is killed (its prompt exit is the daemon's own test).
  await p.stop(8_000);
  expect(worker.child.exitCode, "the worker must outlive the daemon").toBeNull();
  await p.start();
  expect(p.port).toBe(port);

  // The worker finds the new daemon without help; "a few seconds" on a quiet machine, a generous bound here.
  await waitFor(() => served(p), `the worker to reconnect; its output: ${worker.output()}`, 20_000);
  const after = await p.send("orders", "ord_2");
  expect(short(after.end.type), JSON.stringify(after.end.data)).toBe("turn.completed");
  expect(String(after.end.data.text ?? JSON.stringify(after.end.data))).toContain("ord_2");
  expect(worker.output()).toContain("lost the connection");
  expect(worker.child.exitCode).toBeNull();
});
