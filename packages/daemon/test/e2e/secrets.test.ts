/**
 * Secrets never appear in events or logs. A model's api_key comes from
 * ${env:...} in config.yaml; the daemon uses it (the model server sees it),
 * and it shows up nowhere else: not in events, not in the daemon's stderr,
 * not in CLI output, not in agent details, not even when the model server
 * echoes it back in an error.
 */
import { randomBytes } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { agentFile, createProject, short, type TestProject } from "../helpers/spawn-daemon.js";
import { chunk, sse, startOpenAiLoopback, usageChunk, type OpenAiLoopback } from "../helpers/openai-loopback.js";

const SECRET = `sk-e2e-${randomBytes(12).toString("hex")}-DO-NOT-LEAK`;
let server: OpenAiLoopback;
let p: TestProject;
const outputs: string[] = [];

beforeAll(async () => {
  server = await startOpenAiLoopback((req) => {
    if (req.body?.model === "echoes-auth") {
      // A badly behaved server that quotes the credentials back in its error.
      const auth = String(req.headers.authorization);
      return {
        status: 401,
        headers: { "content-type": "application/json", "x-echo-auth": auth },
        pieces: [
          JSON.stringify({
            error: { message: `Incorrect API key provided: ${auth}`, type: "invalid_request_error", code: "invalid_api_key" },
          }),
        ],
      };
    }
    return {
      pieces: sse([chunk({ role: "assistant", content: "" }), chunk({ content: "All good." }), chunk({}, "stop"), usageChunk(12, 3)]),
    };
  });
  p = await createProject({
    models: {
      keyed: { provider: "openai-compatible", model: "fine", base_url: server.baseUrl, api_key: "${env:E2E_MODEL_KEY}" },
      leaky: { provider: "openai-compatible", model: "echoes-auth", base_url: server.baseUrl, api_key: "${env:E2E_MODEL_KEY}" },
    },
    files: {
      "agents/keyed.md": agentFile({ description: "Uses a model with a secret key", model: "keyed" }),
      "agents/leaky.md": agentFile({ description: "Its model server echoes the key", model: "leaky", retries: 0 }),
    },
    env: { E2E_MODEL_KEY: SECRET },
    // The CLI reads config.yaml too (for the address); give it the same environment as the daemon.
    cliEnv: { E2E_MODEL_KEY: SECRET },
  });
});

const noSecret = (where: string, text: string) => {
  expect(text.length, `${where} is empty`).toBeGreaterThan(0);
  expect(text.includes(SECRET), `the secret appears in ${where}`).toBe(false);
  // Not even a large piece of it.
  expect(text.includes(SECRET.slice(0, 20)), `part of the secret appears in ${where}`).toBe(false);
};

describe.concurrent("secrets: two turns, one of them failing", () => {
  it("the key reaches the model server, and a completed turn leaks it nowhere", async () => {
    const r = await p.cli(["ask", "keyed", "hello"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.trim()).toBe("All good.");
    expect(server.requests.some((q) => q.body?.model === "fine" && q.headers.authorization === `Bearer ${SECRET}`)).toBe(true);
    outputs.push(r.stdout + r.stderr);
  });

  it("a model error that echoes the key does not carry it into events, CLI output or logs", async () => {
    const r = await p.cli(["ask", "leaky", "hello"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/The turn failed: .*401/);
    expect(server.requests.some((q) => q.body?.model === "echoes-auth" && q.headers.authorization === `Bearer ${SECRET}`)).toBe(true);
    noSecret("ask's stderr", r.stderr);
    outputs.push(r.stdout + r.stderr);

    const events = await p.events("leaky");
    const failed = events.find((e) => short(e.type) === "turn.failed");
    expect(String(failed!.data.reason)).toMatch(/Incorrect API key provided/);
  });
});

describe("secrets: where they must not appear", () => {
  it("wardrik events --json: no secret", async () => {
    const runs = await Promise.all([p.cli(["events", "keyed", "--json"]), p.cli(["events", "leaky", "--json"])]);
    for (const r of runs) {
      expect(r.code, r.stderr).toBe(0);
      noSecret("CLI output", r.stdout + r.stderr);
    }
    // The failed turn's error is in the record, without the key.
    expect(runs[1]!.stdout).toMatch(/Incorrect API key provided/);
    for (const o of outputs) noSecret("CLI output", o);
  });

  it("the daemon's stderr and stdout (its log) never contain the secret", async () => {
    // Give the log a moment to flush what the turns wrote.
    await p.api("GET", "/v1/health");
    noSecret("the daemon's stderr", p.daemonStderr());
    expect(p.daemonStdout().includes(SECRET)).toBe(false);
  });

  it("the CLI does not need the daemon's environment: a ${env:} it does not have is no error", async () => {
    // The CLI only needs the address from config.yaml; a model key set only for the
    // daemon (a service unit, a secrets manager) must not stop \`wardrik ls\`.
    const r = await p.cli(["ls"], { env: { E2E_MODEL_KEY: undefined } });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^keyed\s+idle/m);
  });

  it("the HTTP API's answers never contain the secret", async () => {
    for (const name of ["keyed", "leaky"]) {
      const id = await p.agentId(name);
      for (const path of [
        `/v1/agents/${id}`,
        `/v1/agents/${id}/events`,
        `/v1/agents/${id}/conversations/main/messages`,
        "/v1/agents",
        "/v1/openapi.json",
      ]) {
        const r = await p.api("GET", path);
        expect(r.status).toBe(200);
        noSecret(`GET ${path}`, r.text);
      }
    }
  });
});
