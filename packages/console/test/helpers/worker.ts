/**
 * A real SDK worker for the console's tests: one of fixtures/, run as its own
 * Node process against the test's daemon, and killed after the test file.
 */
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { REPO_ROOT, cleanupLater, waitFor, type TestProject } from "../../../daemon/test/helpers/spawn-daemon.js";
import { workerArgs } from "../../../daemon/test/helpers/worker-bundle.js";

/** Starts `fixtures/NAME.ts` and waits until `agentId` can call `tool` (workers/…). */
export async function startWorker(
  p: TestProject,
  fixture: string,
  agentId: string,
  tool: string,
  env: Record<string, string> = {},
): Promise<void> {
  const worker = spawn(process.execPath, workerArgs(fileURLToPath(new URL(`../fixtures/${fixture}.ts`, import.meta.url))), {
    cwd: REPO_ROOT,
    env: { ...process.env, NODE_OPTIONS: undefined, WARDRIK_URL: p.url, WARDRIK_TOKEN: p.token, ...env },
    stdio: "ignore",
  });
  cleanupLater(async () => {
    if (worker.exitCode !== null || worker.signalCode !== null) return;
    const exited = new Promise((r) => worker.once("exit", r));
    worker.kill("SIGKILL");
    await exited;
  });
  await waitFor(async () => {
    const tools = await p.apiOk<{ tools: { name: string }[] }>("GET", `/v1/agents/${agentId}/tools`);
    return tools.tools.some((t) => t.name === tool);
  }, `the worker's tool ${tool}`);
}
