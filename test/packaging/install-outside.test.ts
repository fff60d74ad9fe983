/**
 * Wardrik installed outside the checkout, as the README's first section says:
 * the tarballs of `npm run pack` installed globally (here under a temp
 * --prefix) give a `wardrik` on PATH; `wardrik init` makes a project with its
 * own package.json; `npm install` and `npm run worker` there run the project's
 * worker, which serves the example agent's calls (the refund after an
 * approval through the CLI), and `wardrik doctor` finds nothing to fix. The
 * packages are not on the registry: the installed CLI carries the SDK's
 * tarballs, and `wardrik init` copies them into the project's vendor/.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, delimiter, join, resolve } from "node:path";
import { afterAll, beforeAll, expect, test } from "vitest";
import { freePort } from "../../packages/daemon/test/helpers/free-port.js";
import { waitFor } from "../../packages/daemon/test/helpers/wait.js";
import { REPO_ROOT, assertBuilt, exec, npmInstall, outsideEnv, packAll, readJson, type Packed } from "./pack-helpers.js";

let tmp: string;
let packed: Packed[];
let env: NodeJS.ProcessEnv;
const children: ChildProcess[] = [];

beforeAll(async () => {
  assertBuilt();
  tmp = mkdtempSync(join(tmpdir(), "wardrik-install-"));
  packed = await packAll(join(tmp, "dist"));
  const prefix = join(tmp, "prefix");
  // Global install with the README's own command (its `dist/*.tgz` expanded as a shell would, from the folder
  // that holds dist/, as in the checkout); it builds better-sqlite3, which takes a while on a small machine.
  const line = readFileSync(join(REPO_ROOT, "README.md"), "utf8")
    .split("\n")
    .find((l) => l.startsWith("npm install -g "));
  if (!line) throw new Error("the README has no `npm install -g` line");
  const args = line.split("#")[0]!.trim().split(/\s+/).slice(2);
  const expanded = args.flatMap((a) => (a.endsWith("dist/*.tgz") ? packed.map((p) => a.replace("*.tgz", basename(p.file))) : [a]));
  expect(expanded.length).toBeGreaterThan(packed.length);
  await npmInstall(tmp, [...expanded, "--prefix", prefix]);
  env = outsideEnv({ PATH: `${join(prefix, "bin")}${delimiter}${process.env.PATH ?? ""}` });
}, 900_000);

afterAll(async () => {
  for (const child of children) await stop(child);
  rmSync(tmp, { recursive: true, force: true });
});

const version = () => readJson<{ version: string }>(join(REPO_ROOT, "packages", "daemon", "package.json")).version;

test("npm install -g of the tarballs puts wardrik on PATH, of the packed version", async () => {
  const r = await exec("wardrik", ["--version"], { cwd: tmp, env });
  expect(r.stdout.trim()).toBe(version());
});

test("wardrik init, npm install and npm run worker work in a folder outside the checkout", { timeout: 900_000 }, async () => {
  const work = join(tmp, "work");
  mkdirSync(work);
  await exec("wardrik", ["init", "my-agents"], { cwd: work, env });
  const project = join(work, "my-agents");

  const pkg = readJson<{ type: string; scripts: Record<string, string>; dependencies: Record<string, string> }>(
    join(project, "package.json"),
  );
  expect(pkg.type).toBe("module");
  expect(pkg.scripts.worker).toBeDefined();
  // The SDK is not on the registry: it comes from the tarballs the CLI carries, copied into the project.
  expect(pkg.dependencies["@wardrik/sdk"]).toBe(`file:vendor/wardrik-sdk-${version()}.tgz`);
  expect(pkg.dependencies["@wardrik/protocol"]).toBe(`file:vendor/wardrik-protocol-${version()}.tgz`);
  expect(Object.keys(pkg.dependencies)).toEqual(expect.arrayContaining(["zod", "tsx"]));

  // The README's one command, nothing more.
  const installed = await npmInstall(project, [], env);
  // The project's package.json allows the install script its dependencies need (npm 11 asks otherwise).
  expect(installed.stderr).not.toMatch(/install-scripts/);
  expect(readJson<{ version: string }>(join(project, "node_modules", "@wardrik", "sdk", "package.json")).version).toBe(version());
  // The editor's schema comment resolves from the project, now that it has node_modules.
  const named = /^# yaml-language-server: \$schema=(\S+)$/m.exec(readFileSync(join(project, "config.yaml"), "utf8"))![1]!;
  expect(readJson(resolve(project, named))).toEqual(readJson(join(REPO_ROOT, "packages", "daemon", "schemas", "config.json")));

  const port = await freePort();
  const configPath = join(project, "config.yaml");
  writeFileSync(configPath, readFileSync(configPath, "utf8").replace(/^listen:.*$/m, `listen: 127.0.0.1:${port}`));
  const daemon = start("wardrik", ["daemon"], project);
  await waitFor(() => /listening on/.test(daemon.stderr()), `the daemon to listen; stderr: ${daemon.stderr()}`, 30_000);

  const worker = start("npm", ["run", "worker"], project, true);
  const token = readFileSync(join(project, ".wardrik", "admin-token"), "utf8").trim();
  await waitFor(() => serves(port, token, "refund_order"), `the worker to register; its output: ${worker.stderr()}`, 60_000);

  const ask = start("wardrik", ["ask", "helper", "Refund order ord_1234"], project);
  const approve = await waitFor(
    () => /wardrik (approve helper call_\w+)/.exec(ask.stderr())?.[1],
    `an approval request: ${ask.stderr()}`,
    30_000,
  );
  expect(ask.stderr()).toMatch(/workers\/find_order/);
  await exec("wardrik", approve.split(" "), { cwd: project, env });
  const code = await ask.exited;
  expect(code, ask.stderr()).toBe(0);
  expect(ask.stdout()).toMatch(/Order ord_1234 is refunded: \{"refunded":"ord_1234","amount":42/);
  // The worker said it connected, and what it serves.
  expect(worker.stderr()).toMatch(
    /Wardrik: worker \S+ connected to ws:\/\/127\.0\.0\.1:\d+\/v1\/workers; serving find_order, refund_order\./,
  );
  const doctor = await exec("wardrik", ["doctor"], { cwd: project, env });
  expect(doctor.stdout).toMatch(/^Nothing to fix/m);
});

interface Started {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  exited: Promise<number | null>;
}

/** A long-running process; `group` puts it in its own process group so stopping it stops what it started (npm, tsx). */
function start(command: string, args: string[], cwd: string, group = false): Started {
  const child = spawn(command, args, { cwd, env, stdio: ["ignore", "pipe", "pipe"], detached: group });
  children.push(child);
  let out = "";
  let err = "";
  child.stdout!.setEncoding("utf8").on("data", (c: string) => (out += c));
  child.stderr!.setEncoding("utf8").on("data", (c: string) => (err += c));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return { child, stdout: () => out, stderr: () => err + out, exited };
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  const group = child.spawnargs[0] === "npm";
  const kill = (signal: NodeJS.Signals): void => {
    try {
      if (group) process.kill(-child.pid!, signal);
      else child.kill(signal);
    } catch {
      // already gone
    }
  };
  kill("SIGTERM");
  const timer = setTimeout(() => kill("SIGKILL"), 10_000);
  await exited;
  clearTimeout(timer);
}

/** Whether a connected worker serves `tool`, as the helper agent's details list it. */
async function serves(port: number, token: string, tool: string): Promise<boolean> {
  const headers = { authorization: `Bearer ${token}` };
  const list = (await (await fetch(`http://127.0.0.1:${port}/v1/agents?name=helper`, { headers })).json()) as { agents: { id: string }[] };
  const agent = (await (await fetch(`http://127.0.0.1:${port}/v1/agents/${list.agents[0]!.id}`, { headers })).json()) as {
    tool_sources?: { status: string; reason?: string }[];
  };
  return (agent.tool_sources ?? []).some((s) => s.status === "connected" && (s.reason ?? "").includes(tool));
}
