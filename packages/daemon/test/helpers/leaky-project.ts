/**
 * Steps the secret-leak tests share: a stored secret handed to an MCP server
 * of config.yaml (the daemon restarts to read it), and the leaky worker
 * (test/e2e/fixtures/leaky-worker.mjs) connected with the secret in its
 * environment. Both are stopped after the file.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { cleanupLater, REPO_ROOT, waitFor, type TestProject } from "./spawn-daemon.js";

const WORKER_FIXTURE = fileURLToPath(new URL("../e2e/fixtures/leaky-worker.mjs", import.meta.url));

/** Stores `secret` as LEAK_TOKEN, adds MCP server `name` (this node, running `args`), and restarts the daemon. */
export async function addLeakyServer(p: TestProject, secret: string, name: string, args: string[]): Promise<void> {
  // Stored as `wardrik secret set` does; config.yaml can use it from the next start.
  const stored = await p.api("POST", "/v1/secrets/LEAK_TOKEN", { value: secret });
  if (stored.status !== 200) throw new Error(`storing the secret answered ${stored.status}: ${stored.text}`);
  await p.stop();
  p.write(
    "config.yaml",
    // The leaky fixtures nest 1,000 levels: past the default limits.json_depth (64), which would refuse them before redaction is tested.
    `${p.read("config.yaml")}\nlimits:\n  json_depth: 2000\nmcp:\n  ${name}:\n    command: ${JSON.stringify(process.execPath)}\n    args: ${JSON.stringify(args)}\n`,
  );
  await p.start();
}

/** Starts the leaky worker for the project's org; resolves once agent `agent` sees its tools. */
export async function startLeakyWorker(p: TestProject, secret: string, agent: string): Promise<ChildProcess> {
  const worker = spawn(process.execPath, [WORKER_FIXTURE], {
    cwd: REPO_ROOT,
    env: { ...process.env, WARDRIK_URL: p.url, WARDRIK_TOKEN: p.token, LEAK_VALUE: secret },
    stdio: ["ignore", "pipe", "pipe"],
  });
  cleanupLater(async () => {
    if (worker.exitCode === null) worker.kill("SIGKILL");
  });
  const agentId = await p.agentId(agent);
  await waitFor(async () => {
    const a = await p.apiOk<{ tool_sources: { name: string; reason?: string }[] }>("GET", `/v1/agents/${agentId}`);
    return a.tool_sources.some((s) => s.name.startsWith("worker leaky-worker") && /reveal_deep.*reveal_fail/.test(s.reason ?? ""));
  }, "the worker to register its tools");
  return worker;
}
