/**
 * Secrets never leak, by any route. A secret is stored, then handed to a real
 * stdio MCP server (as `--token VALUE` and `--api-key=VALUE`, next to an
 * `${env:}` credential given as `--auth-token VALUE`) that quotes it in its
 * results, error results, JSON-RPC errors, and on stderr split over two writes,
 * right up to a crash; and to a real SDK worker whose tools return it and
 * fail with it. Then the database file (with its WAL), the daemon's log, and
 * every answer of the API and the CLI are searched for it: none holds it, nor
 * a large piece of it. The blanks ([secret:NAME]) show where it would have been.
 */
import { randomBytes } from "node:crypto";

import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { agentFile, createProject, short } from "../helpers/spawn-daemon.js";
import { addLeakyServer, startLeakyWorker } from "../helpers/leaky-project.js";
import { databaseContents, projectDatabaseUrl } from "../helpers/database-contents.js";

const SECRET = `lk-${randomBytes(10).toString("hex")}-STORED`;
const ENV_VALUE = `ev-${randomBytes(10).toString("hex")}-FROM-ENV`;
const MCP_FIXTURE = fileURLToPath(new URL("./fixtures/leaky-mcp.mjs", import.meta.url));

const SCRIPT = `steps:
  - tool_calls:
      - tool: leaky/whoami
      - tool: leaky/fail
      - tool: leaky/refuse
      - tool: workers/reveal
      - tool: workers/reveal_fail
  - tool_calls:
      - tool: leaky/crash
  - text: "Last result: {{result}}"
`;

/** Fails when `text` holds a credential, or a large piece of one. */
function expectClean(where: string, text: string | Buffer): void {
  const s = typeof text === "string" ? text : text.toString("latin1");
  for (const value of [SECRET, ENV_VALUE]) {
    for (const piece of [value, value.slice(0, 14), value.slice(-14)]) {
      expect(s.includes(piece), `${where} holds "${piece}"`).toBe(false);
    }
  }
}

describe("secrets never leak", () => {
  it("from an MCP server and a worker that quote them everywhere: not in the database, the log, the API or the CLI", async () => {
    const p = await createProject({
      scripts: { leak: SCRIPT },
      files: {
        "agents/leaker.md": agentFile({ description: "Calls leaky tools", model: "leak", tools: ["leaky/*", "workers/*"], policy: "open" }),
        "policies/open.yaml": 'description: Everything runs.\nrules:\n  - tool: "*"\n    decision: allow\n',
      },
      // Debug lines too: the MCP server's stderr is logged at debug.
      env: { LEAK_ENV: ENV_VALUE, WARDRIK_LOG_LEVEL: "debug" },
      cliEnv: { LEAK_ENV: ENV_VALUE },
    });
    const args = [MCP_FIXTURE, "--token", "${secret:LEAK_TOKEN}", "--api-key=${secret:LEAK_TOKEN}", "--auth-token", "${env:LEAK_ENV}"];
    await addLeakyServer(p, SECRET, "leaky", args);
    const worker = await startLeakyWorker(p, SECRET, "leaker");
    const agentId = await p.agentId("leaker");

    const { run, end } = await p.send(agentId, "Use every tool.", "main", 60_000);
    expect(short(end.type), JSON.stringify(end.data)).toBe("turn.completed");

    // The values did travel, and were blanked on the way.
    const events = await p.events(agentId);
    const outcomes = events.filter((e) => /call\.(completed|failed)$/.test(e.type)).map((e) => JSON.stringify(e.data));
    expect(outcomes).toHaveLength(6);
    for (const o of outcomes) expect(o, o).toMatch(/\[secret:LEAK_TOKEN\]|\[redacted\]/);
    const history = await p.apiOk<unknown>("GET", `/v1/agents/${agentId}/conversations/main/messages`);
    const historyText = JSON.stringify(history);
    expect(historyText).toContain("connected with token=[secret:LEAK_TOKEN] api-key=[secret:LEAK_TOKEN] auth-token=[redacted]");
    expect(historyText).toContain("could not use [secret:LEAK_TOKEN]");
    // The crash's stderr tail, written in two pieces, is in the call's error, blanked.
    expect(historyText).toContain("panic: lost session for token=[secret:LEAK_TOKEN] api-key=[secret:LEAK_TOKEN] auth-token=[redacted]");
    expect(p.daemonStderr()).toContain("leaky starting with token=[secret:LEAK_TOKEN]");

    const answers: [string, string][] = [];
    for (const path of [
      "/v1/agents",
      `/v1/agents/${agentId}`,
      `/v1/agents/${agentId}/events?limit=10000`,
      `/v1/agents/${agentId}/conversations`,
      `/v1/agents/${agentId}/conversations/main/messages`,
      `/v1/agents/${agentId}/turns/${run}`,
      "/v1/secrets",
    ]) {
      const r = await p.api("GET", path);
      expect(r.status, path).toBe(200);
      answers.push([`GET ${path}`, r.text]);
    }
    for (const cmd of [
      ["agent", "show", "leaker"],
      ["agent", "show", "leaker", "--json"],
      ["events", "leaker", "--json"],
      ["events", "leaker"],
      ["history", "leaker"],
      ["ls", "--json"],
      ["secret", "ls"],
    ]) {
      const r = await p.cli(cmd);
      expect(r.code, `${cmd.join(" ")}: ${r.stderr}`).toBe(0);
      answers.push([`wardrik ${cmd.join(" ")}`, r.stdout + r.stderr]);
    }
    for (const [where, text] of answers) {
      expect(text.length, `${where} is empty`).toBeGreaterThan(0);
      expectClean(where, text);
    }

    const database = projectDatabaseUrl(p.dir, p.read("config.yaml"));
    const running = await databaseContents(database);
    expect(running.length).toBeGreaterThan(database.startsWith("sqlite:") ? 1 : 5);
    for (const part of running) expectClean(`${part.where} (daemon running)`, Buffer.from(part.text, "latin1"));
    worker.kill("SIGTERM");
    await p.stop();
    for (const part of await databaseContents(database)) expectClean(`${part.where} (daemon stopped)`, Buffer.from(part.text, "latin1"));
    expectClean("the daemon's log", p.daemonStderr() + p.daemonStdout());
  });
});
