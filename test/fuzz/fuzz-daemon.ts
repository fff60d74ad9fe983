/**
 * The daemon the fuzzer attacks: the built `wardrik` binary in a fresh project
 * (`wardrik init`) with what the targets need: agents with webhook triggers
 * (Standard Webhooks and GitHub secrets), a Slack section, and a token of a
 * second org. Killed (SIGKILL) and deleted by `close()`.
 */
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { freePort } from "../../packages/daemon/test/helpers/free-port.js";

const BIN = fileURLToPath(new URL("../../packages/daemon/bin/wardrik.js", import.meta.url));

export const SECRETS = {
  slack: "fuzz-signing-secret-0123456789",
  webhook: `whsec_${Buffer.from("fuzz webhook signing key, 32 bytes").toString("base64")}`,
  github: "fuzz-github-secret",
};

export interface FuzzDaemon {
  url: string;
  token: string;
  otherToken: string;
  alive(): boolean;
  /** What the daemon wrote on stderr (its log), for a crash report. */
  log(): string;
  close(): Promise<void>;
}

const agent = (description: string, triggers = "") => `---\ndescription: ${description}\nmodel: demo\n${triggers}---\nYou help.\n`;

export async function startFuzzDaemon(): Promise<FuzzDaemon> {
  const root = mkdtempSync(join(tmpdir(), "wardrik-fuzz-"));
  const dir = join(root, "project");
  const init = spawnSync(process.execPath, [BIN, "init", dir], { encoding: "utf8" });
  if (init.status !== 0) throw new Error(`wardrik init failed: ${init.stderr}`);
  const port = await freePort();
  const config = readFileSync(join(dir, "config.yaml"), "utf8").replace(/^listen:.*$/m, `listen: 127.0.0.1:${port}`);
  writeFileSync(
    join(dir, "config.yaml"),
    `${config}\nslack:\n  bot_token: xoxb-fuzz\n  signing_secret: ${SECRETS.slack}\n  api_url: http://127.0.0.1:9/api\n  channels:\n    C0123ABCD: helper\n  approvers: [U0456EFGH]\n`,
  );
  writeFileSync(
    join(dir, "agents", "deployer.md"),
    agent(
      "Woken by deploys",
      `triggers:\n  - { webhook: deploy, secret: "${SECRETS.webhook}", message: "Deployed {{service}} at {{build.version}}" }\n`,
    ),
  );
  writeFileSync(
    join(dir, "agents", "gitwatch.md"),
    agent("Woken by pushes", `triggers:\n  - { webhook: push, secret: "${SECRETS.github}", message: "Push to {{repository.name}}" }\n`),
  );
  const token = readFileSync(join(dir, ".wardrik", "admin-token"), "utf8").trim();
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.NODE_OPTIONS;
  const child = spawn(process.execPath, [BIN, "daemon"], { cwd: dir, env, stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  child.stderr!.setEncoding("utf8").on("data", (c: string) => (stderr = (stderr + c).slice(-200_000)));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    await exited;
    rmSync(root, { recursive: true, force: true });
  };
  const deadline = Date.now() + 60_000;
  while (
    !(await fetch(`${url}/v1/health`).then(
      (r) => r.ok,
      () => false,
    ))
  ) {
    if (child.exitCode !== null || Date.now() > deadline) {
      await stop();
      throw new Error(`the daemon did not start:\n${stderr}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  const made = await fetch(`${url}/v1/tokens`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify({ org: "other", name: "fuzz" }),
  });
  const { token: otherToken } = (await made.json()) as { token: string };
  return {
    url,
    token,
    otherToken,
    alive: () => child.exitCode === null && child.signalCode === null,
    log: () => stderr,
    close: stop,
  };
}
