/**
 * What `wardrik ask` shows while it waits: on a terminal (a real pseudo-
 * terminal made by util-linux `script`) one status line rewritten in place
 * with the time spent, cleared when the reply streams; elsewhere one line per
 * change of state: the model, a model retry after 429 or a cut stream, an MCP
 * server starting. The model is a loopback server speaking OpenAI's format.
 */
import { spawn } from "node:child_process";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BIN, agentFile, createProject, type TestProject } from "../helpers/spawn-daemon.js";

let p: TestProject;

const frame = (delta: Record<string, unknown>, finish: string | null = null) =>
  `data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", created: 1, model: "m", choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
const usage = (input: number, output: number) =>
  `data: ${JSON.stringify({ id: "c1", object: "chat.completion.chunk", created: 1, model: "m", choices: [], usage: { prompt_tokens: input, completion_tokens: output, total_tokens: input + output } })}\n\n`;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Attempts per model, so each model can fail its first call in its own way. */
const attempts = new Map<string, number>();

async function reply(res: ServerResponse, text: string[], delayMs = 0): Promise<void> {
  await sleep(delayMs);
  res.writeHead(200, { "content-type": "text/event-stream" });
  res.write(frame({ role: "assistant", content: "" }));
  for (const t of text) {
    res.write(frame({ content: t }));
    await sleep(20);
  }
  res.write(frame({}, "stop"));
  res.write(usage(1200, 34));
  res.end("data: [DONE]\n\n");
}

const server = createServer((req: IncomingMessage, res: ServerResponse) => {
  let raw = "";
  req.on("data", (c: Buffer) => (raw += c.toString()));
  req.on("end", () => {
    const model = (JSON.parse(raw) as { model: string }).model;
    const n = (attempts.get(model) ?? 0) + 1;
    attempts.set(model, n);
    void (async () => {
      if (model === "slow") return reply(res, ["Thought ", "about it."], 2600);
      if (model === "limited" && n === 1) {
        res.writeHead(429, { "content-type": "application/json", "retry-after": "0" });
        return res.end(JSON.stringify({ error: { message: "Rate limit reached", type: "rate_limit_exceeded" } }));
      }
      if (model === "cut" && n === 1) {
        res.writeHead(200, { "content-type": "text/event-stream" });
        res.write(frame({ role: "assistant", content: "" }));
        res.write(frame({ content: "Half a" }));
        await sleep(400);
        return res.destroy();
      }
      return reply(res, ["All of it."]);
    })();
  });
});

beforeAll(async () => {
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  const model = (name: string) => ({ provider: "openai-compatible", model: name, base_url: url, api_key: "x" });
  const slowMcp = fileURLToPath(new URL("./fixtures/slow-start-mcp.mjs", import.meta.url));
  p = await createProject({
    config: (init) =>
      `${init}\nmcp:\n  slowpoke:\n    command: ${JSON.stringify(process.execPath)}\n    args: [${JSON.stringify(slowMcp)}]\n`,
    models: { slow: model("slow"), limited: model("limited"), cut: model("cut"), quick: model("quick") },
    files: {
      "agents/thinker.md": agentFile({ description: "Slow model", model: "slow" }),
      "agents/limited.md": agentFile({ description: "Rate limited once", model: "limited", retries: 2 }),
      "agents/cutter.md": agentFile({ description: "Stream cut once", model: "cut", retries: 2 }),
      "agents/mcp_user.md": agentFile({ description: "Needs a slow MCP server", model: "quick", tools: ["slowpoke/*"] }),
    },
  });
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((r) => server.close(() => r()));
});

/** Runs `wardrik ARGS` in a pseudo-terminal (stdout and stderr both go to it); returns everything it wrote. */
function inTerminal(args: string[]): Promise<{ code: number | null; screen: string }> {
  const command = [process.execPath, BIN, ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(" ");
  const env: NodeJS.ProcessEnv = { ...process.env, TERM: "xterm", NO_COLOR: "1" };
  delete env.WARDRIK_URL;
  delete env.WARDRIK_TOKEN;
  delete env.NODE_OPTIONS;
  const child = spawn("script", ["-qfec", command, "/dev/null"], { cwd: p.dir, env, stdio: ["ignore", "pipe", "pipe"] });
  let screen = "";
  child.stdout.setEncoding("utf8").on("data", (c: string) => (screen += c));
  const timer = setTimeout(() => child.kill("SIGKILL"), 60_000);
  return new Promise((resolve) =>
    child.once("close", (code) => {
      clearTimeout(timer);
      resolve({ code, screen });
    }),
  );
}

describe.concurrent("wardrik ask progress", () => {
  it("on a terminal: one status line with the elapsed time, cleared before the reply, then the summary", async () => {
    const r = await inTerminal(["ask", "thinker", "think"]);
    expect(r.code, r.screen).toBe(0);
    const CLEAR = "\r\x1b[K";
    // The line is rewritten in place as the seconds pass...
    expect(r.screen).toContain(`${CLEAR}waiting for the model (slow) · 0 s`);
    expect(r.screen).toMatch(/\r\x1b\[Kwaiting for the model \(slow\) · [12] s/);
    // ...and cleared just before the reply text.
    expect(r.screen).toMatch(/\r\x1b\[K(\r\x1b\[K)*Thought about it\./);
    // No line-per-state output on a terminal.
    expect(r.screen).not.toContain("… waiting");
    const lines = r.screen.split(/\r?\n/).filter((l) => l.trim() !== "");
    expect(lines.at(-1)).toMatch(/^(\r\x1b\[K)*✓ completed in [\d.]+ s · 1 model call · 1,200 tokens in, 34 out · \$0\.0000\r?$/);
  });

  it("elsewhere: a line for the model call and its retry after 429; no partial-reply note when nothing was printed", async () => {
    const r = await p.cli(["ask", "limited", "hello"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe("All of it.\n");
    expect(r.stderr.split("\n").filter(Boolean)).toEqual([
      "… waiting for the model (limited)",
      // Why it waits: the provider's answer (429) and when the next attempt comes.
      expect.stringMatching(
        /^… the model call failed: model API error 429: Rate limit reached; retrying in \d\.\d s \(attempt 2\) \(limited\)$/,
      ),
      expect.stringMatching(/^✓ completed in [\d.]+ m?s · 1 model call · 1,200 tokens in, 34 out · \$0\.0000$/),
    ]);
    expect(r.stderr).not.toContain("void");
  });

  it("a reply cut off mid-stream and retried: the printed part is declared void", async () => {
    const r = await p.cli(["ask", "cutter", "hello"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe("Half a\nAll of it.\n");
    expect(r.stderr).toContain("(the model call failed and is being retried; its partial reply above is void)");
  });

  it("an MCP server that takes a while to start shows as such", async () => {
    const r = await p.cli(["ask", "mcp_user", "hello"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe("All of it.\n");
    const lines = r.stderr.split("\n").filter(Boolean);
    expect(lines[0]).toBe("… waiting for the model (quick)");
    expect(lines).toContain("… starting MCP server slowpoke");
    expect(lines.at(-1)).toMatch(/^✓ completed in /);
  });
});
