import { createServer, type Server } from "node:http";
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { initProject } from "../../src/cli/init-project.js";
import { startDaemon, type Daemon } from "../../src/daemon.js";

const SECRET = "sk-wardrik-test-7f3a9c11b2";
const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f();
});

/** A Chat Completions server that records the Authorization header it gets. */
async function chatServer(seen: string[]): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    seen.push(String(req.headers.authorization));
    req.resume();
    req.on("end", () => {
      res.writeHead(200, { "content-type": "text/event-stream" });
      const chunk = (o: unknown) => res.write(`data: ${JSON.stringify(o)}\n\n`);
      chunk({
        id: "c1",
        object: "chat.completion.chunk",
        created: 1,
        model: "m",
        choices: [{ index: 0, delta: { role: "assistant", content: "hello" }, finish_reason: null }],
      });
      chunk({
        id: "c1",
        object: "chat.completion.chunk",
        created: 1,
        model: "m",
        choices: [{ index: 0, delta: {}, finish_reason: "stop" }],
        usage: { prompt_tokens: 5, completion_tokens: 1, total_tokens: 6 },
      });
      res.end("data: [DONE]\n\n");
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  cleanup.push(() => new Promise<void>((r) => server.close(() => r())));
  const addr = server.address() as { port: number };
  return { url: `http://127.0.0.1:${addr.port}/v1`, server };
}

async function api(d: Daemon, token: string, method: string, path: string, body?: unknown) {
  const res = await fetch(d.url + path, {
    method,
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  return { status: res.status, json: (await res.json()) as Record<string, unknown> };
}

describe("secrets", () => {
  it("are stored encrypted, resolve ${secret:NAME} in config.yaml at restart, and never show in events or logs", async () => {
    const base = mkdtempSync(join(tmpdir(), "wardrik-secrets-"));
    cleanup.push(() => rmSync(base, { recursive: true, force: true }));
    const dir = join(base, "p");
    initProject(dir);
    const seen: string[] = [];
    const { url } = await chatServer(seen);
    const logs: string[] = [];
    const log = (level: string, msg: string, fields?: Record<string, unknown>) => void logs.push(JSON.stringify({ level, msg, ...fields }));
    const token = readFileSync(join(dir, ".wardrik", "admin-token"), "utf8").trim();

    let d = await startDaemon(dir, { port: 0, log });
    const stored = await api(d, token, "POST", "/v1/secrets/LOCAL_KEY", { value: SECRET });
    expect(stored.json).toEqual({ name: "LOCAL_KEY", stored: true });
    expect((await api(d, token, "GET", "/v1/secrets")).json).toEqual({ secrets: ["LOCAL_KEY"], unreadable: [] });
    expect((await api(d, token, "POST", "/v1/secrets/bad-name!", { value: "x" })).status).toBe(400);
    await d.close();

    writeFileSync(
      join(dir, "config.yaml"),
      `model: local\nmodels:\n  local:\n    provider: openai-compatible\n    model: m\n    base_url: ${url}\n    api_key: \${secret:LOCAL_KEY}\npolicy: default\n`,
    );
    d = await startDaemon(dir, { port: 0, log });
    cleanup.push(() => d.close());
    const agents = (await api(d, token, "GET", "/v1/agents")).json.agents as { id: string; status: string }[];
    expect(agents[0]!.status).toBe("idle");
    const q = await api(d, token, "POST", `/v1/agents/${agents[0]!.id}/messages`, { text: "hi" });
    expect(q.status).toBe(202);
    for (let i = 0; i < 100 && seen.length === 0; i++) await new Promise((r) => setTimeout(r, 20));
    expect(seen[0]).toBe(`Bearer ${SECRET}`);
    await new Promise((r) => setTimeout(r, 100));
    const events = await api(d, token, "GET", `/v1/agents/${agents[0]!.id}/events`);
    expect(JSON.stringify(events.json)).not.toContain(SECRET);
    expect(logs.join("\n")).not.toContain(SECRET);
    expect(readFileSync(join(dir, ".wardrik", "wardrik.db")).includes(SECRET)).toBe(false);
    expect(statSync(join(dir, ".wardrik", "secret-key")).mode & 0o777).toBe(0o600);
  });

  it("a reference to a secret that is not set stops the daemon with a message naming it", async () => {
    const base = mkdtempSync(join(tmpdir(), "wardrik-secrets-"));
    cleanup.push(() => rmSync(base, { recursive: true, force: true }));
    const dir = join(base, "p");
    initProject(dir);
    writeFileSync(join(dir, "config.yaml"), "models:\n  x:\n    provider: openai\n    model: gpt-4o\n    api_key: ${secret:MISSING}\n");
    await expect(startDaemon(dir, { port: 0, log: () => undefined })).rejects.toThrow(
      /secret MISSING is not set \(wardrik secret set MISSING\)/,
    );
  });
});
