// The main job, offline: a project made by `wardrik init`, its daemon, the
// example agent answering through the scripted model (files tool calls), then
// the project's own worker (`npm run worker`) serving a tool call and a refund
// that waits for a person until `wardrik approve`. Everything is stopped and
// the temporary project removed at the end.
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const cli = join(root, "packages", "daemon", "bin", "wardrik.js");
const base = mkdtempSync(join(tmpdir(), "wardrik-demo-"));
const project = join(base, "demo");
const run = (args, opts = {}) => spawnSync(process.execPath, [cli, ...args], { cwd: project, encoding: "utf8", ...opts });
const say = (line) => console.log(line);

const port = await new Promise((resolve) => {
  const s = createServer().listen(0, "127.0.0.1", () => {
    const { port } = s.address();
    s.close(() => resolve(port));
  });
});

let daemon;
let worker;
try {
  const init = spawnSync(process.execPath, [cli, "init", project], { encoding: "utf8" });
  if (init.status !== 0) throw new Error(init.stderr);
  // init's own "Next:" lines point into this temporary folder, which the demo deletes.
  process.stdout.write(init.stdout.slice(0, init.stdout.indexOf("\nNext:") + 1));
  const configPath = join(project, "config.yaml");
  writeFileSync(configPath, readFileSync(configPath, "utf8").replace("listen: 127.0.0.1:7373", `listen: 127.0.0.1:${port}`));
  // Stands in for `npm install` in the project: the checkout's own packages (@wardrik/sdk, zod, tsx).
  symlinkSync(join(root, "node_modules"), join(project, "node_modules"), "dir");

  daemon = spawn(process.execPath, [cli, "daemon"], { cwd: project, stdio: ["ignore", "ignore", "pipe"] });
  let log = "";
  daemon.stderr.on("data", (d) => (log += d));
  await until(
    async () => (await fetch(`http://127.0.0.1:${port}/v1/health`)).ok,
    () => `the daemon did not start:\n${log}`,
    15_000,
  );

  say(`\n$ wardrik ask helper "What should I remember today?"`);
  const ask = run(["ask", "helper", "What should I remember today?"], { stdio: ["ignore", "pipe", "inherit"] });
  process.stdout.write(ask.stdout);
  if (ask.status !== 0) throw new Error(`wardrik ask exited ${ask.status}`);

  say(`\n$ npm run worker      # workers/tools.ts: find_order and refund_order, with @wardrik/sdk`);
  // Its own process group, so stopping it also stops what npm and tsx start under it.
  worker = spawn("npm", ["run", "--silent", "worker"], { cwd: project, stdio: ["ignore", "inherit", "inherit"], detached: true });
  const token = readFileSync(join(project, ".wardrik", "admin-token"), "utf8").trim();
  await until(
    () => workerServes(port, token, "refund_order"),
    () => "the worker did not register its tools",
    30_000,
  );
  say("(the worker connected and registered its tools)");

  say(`\n$ wardrik ask helper "Refund order ord_1234"`);
  const refund = spawn(process.execPath, [cli, "ask", "helper", "Refund order ord_1234"], {
    cwd: project,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let err = "";
  refund.stdout.on("data", (d) => (out += d));
  refund.stderr.on("data", (d) => {
    err += d;
    process.stderr.write(d);
  });
  const ended = new Promise((resolve) => refund.once("close", resolve));
  const approve = await until(
    () => /wardrik (approve helper call_\w+)/.exec(err)?.[1],
    () => `no approval was asked for:\n${err}`,
    30_000,
  );
  say(`\n$ wardrik ${approve}`);
  const approved = run(approve.split(" "));
  process.stdout.write(approved.stdout + approved.stderr);
  const code = await ended;
  process.stdout.write(out);
  if (code !== 0) throw new Error(`wardrik ask exited ${code}`);

  say(`\n$ wardrik events helper`);
  process.stdout.write(run(["events", "helper"]).stdout);
} finally {
  if (worker && worker.exitCode === null) {
    const exited = new Promise((r) => worker.once("exit", r));
    process.kill(-worker.pid, "SIGTERM");
    await exited;
  }
  if (daemon && daemon.exitCode === null) {
    daemon.kill("SIGTERM");
    await new Promise((r) => daemon.once("exit", r));
  }
  rmSync(base, { recursive: true, force: true });
}
say("\nThe worker and the daemon stopped; the demo project was removed.");
say(
  "Next: install Wardrik (`npm run pack && npm install -g --allow-scripts=better-sqlite3 ./dist/*.tgz`, see the README), then `wardrik init ~/my-agents`.",
);

/** Polls `check` until it returns something truthy; throws `why()` after `timeoutMs`. */
async function until(check, why, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      const value = await check();
      if (value) return value;
    } catch {
      // not yet
    }
    if (Date.now() > deadline) throw new Error(why());
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Whether a connected worker serves `tool`, as the helper agent's details list it. */
async function workerServes(port, token, tool) {
  const headers = { authorization: `Bearer ${token}` };
  const { agents } = await (await fetch(`http://127.0.0.1:${port}/v1/agents?name=helper`, { headers })).json();
  const agent = await (await fetch(`http://127.0.0.1:${port}/v1/agents/${agents[0].id}`, { headers })).json();
  return (agent.tool_sources ?? []).some((s) => s.status === "connected" && String(s.reason ?? "").includes(tool));
}
