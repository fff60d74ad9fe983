import { test, expect } from "vitest";
import { startDaemon, spawnWorker, workerEnv, callContext } from "./helpers.js";
test("smoke", async () => {
  const d = await startDaemon();
  const w = spawnWorker("tools-worker.ts", workerEnv(d));
  try {
    expect(await d.gateway.waitForTool("org-a", "find_order", 10000)).toBe(true);
    console.log(JSON.stringify(d.gateway.list({ org: "org-a", agentId: "x" }), null, 1));
    console.log(await d.gateway.call("find_order", { payment_intent: "pi_1" }, callContext().ctx));
    console.log(w.events);
  } finally { await w.stop(); await d.close(); }
});
