// The main job, offline: a project made by `wardrik init`, its daemon, the
// example agent answering through the scripted model (with files tool calls),
// the reply printed, the daemon stopped.
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const cli = join(root, "packages", "daemon", "bin", "wardrik.js");
const base = mkdtempSync(join(tmpdir(), "wardrik-demo-"));
const project = join(base, "demo");
const run = (args, opts = {}) => spawnSync(process.execPath, [cli, ...args], { cwd: project, encoding: "utf8", ...opts });

const port = await new Promise((resolve) => {
  const s = createServer().listen(0, "127.0.0.1", () => {
    const { port } = s.address();
    s.close(() => resolve(port));
  });
});

let daemon;
try {
  const init = spawnSync(process.execPath, [cli, "init", project], { encoding: "utf8" });
  if (init.status !== 0) throw new Error(init.stderr);
  process.stdout.write(init.stdout);
  const configPath = join(project, "config.yaml");
  writeFileSync(configPath, readFileSync(configPath, "utf8").replace("listen: 127.0.0.1:7373", `listen: 127.0.0.1:${port}`));

  daemon = spawn(process.execPath, [cli, "daemon"], { cwd: project, stdio: ["ignore", "ignore", "pipe"] });
  let log = "";
  daemon.stderr.on("data", (d) => (log += d));
  const deadline = Date.now() + 15_000;
  for (;;) {
    try {
      if ((await fetch(`http://127.0.0.1:${port}/v1/health`)).ok) break;
    } catch {
      // not up yet
    }
    if (Date.now() > deadline || daemon.exitCode !== null) throw new Error(`the daemon did not start:\n${log}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  console.log(`\n$ wardrik ask helper "What should I remember today?"`);
  const ask = run(["ask", "helper", "What should I remember today?"], { stdio: ["ignore", "pipe", "inherit"] });
  process.stdout.write(ask.stdout);
  console.log(`\n$ wardrik events helper`);
  process.stdout.write(run(["events", "helper"]).stdout);
  if (ask.status !== 0) throw new Error(`wardrik ask exited ${ask.status}`);
} finally {
  if (daemon && daemon.exitCode === null) {
    daemon.kill("SIGTERM");
    await new Promise((r) => daemon.once("exit", r));
  }
  rmSync(base, { recursive: true, force: true });
}
console.log("\nThe daemon stopped; the demo project was removed.");
