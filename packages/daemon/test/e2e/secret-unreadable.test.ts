/**
 * A stored secret that cannot be decrypted (its row was altered: here, given
 * another secret's ciphertext, which is bound to another name) stops nothing
 * but what needs it. The daemon starts and says which secret, by name, in its
 * log; `wardrik secret ls` marks it; agents that do not need it answer. An
 * agent whose model needs it, an MCP server given it, Slack (whose token it
 * is) and an agent file that names it each say which secret is at fault; its
 * value shows nowhere.
 */
import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import { projectDatabaseUrl } from "../helpers/database-contents.js";
import { withSideConnection } from "../helpers/side-connection.js";
import { agentFile, createProject, short, type TestProject } from "../helpers/spawn-daemon.js";

const GOOD = "gv-31c9a0d2f4e8-READABLE";
const BROKEN = "bv-8e7d6c5b4a39-ALTERED";
const MCP_FIXTURE = fileURLToPath(new URL("./fixtures/quoting-mcp.mjs", import.meta.url));
const DECRYPT = /secret BROKEN cannot be decrypted: its stored value was not written for org default and name BROKEN, or was altered/;

let p: TestProject;

beforeAll(async () => {
  p = await createProject({
    start: false,
    models: {
      keyed: { provider: "openai-compatible", model: "m", base_url: "http://127.0.0.1:9/v1", api_key: "${secret:BROKEN}" },
      fine: { provider: "script", model: "echo", headers: { "x-good": "${secret:GOOD}" } },
    },
    files: {
      "agents/fine.md": agentFile({ description: "Needs only GOOD", model: "fine" }),
      "agents/keyed.md": agentFile({ description: "Its model needs BROKEN", model: "keyed" }),
      "agents/locked.md": agentFile({ description: "Uses the locked server", model: "fine", tools: ["locked/*"] }),
      "agents/hooked.md":
        "---\ndescription: Its webhook's secret is BROKEN\nmodel: fine\ntriggers:\n  - webhook: deploy\n    secret: ${secret:BROKEN}\n    message: Deployed\n---\nHi.\n",
    },
  });
  // Stored as a person would, while no daemon runs.
  for (const [name, value] of [
    ["GOOD", GOOD],
    ["BROKEN", BROKEN],
  ] as const) {
    const set = await p.cli(["secret", "set", name], { input: value });
    expect(set.code, set.stderr).toBe(0);
  }
  const mcp = `mcp:\n  locked:\n    command: ${JSON.stringify(process.execPath)}\n    args: ${JSON.stringify([MCP_FIXTURE, "${secret:BROKEN}"])}`;
  const slack = "slack:\n  bot_token: ${secret:BROKEN}\n  signing_secret: ${secret:GOOD}";
  p.write("config.yaml", `${p.read("config.yaml")}\n${mcp}\n${slack}\n`);
  // GOOD's ciphertext in BROKEN's row: it was sealed for another name, so it no longer decrypts.
  await withSideConnection(projectDatabaseUrl(p.dir, p.read("config.yaml")), (db) =>
    db.run("UPDATE secrets SET ciphertext = (SELECT ciphertext FROM secrets WHERE name = 'GOOD') WHERE name = 'BROKEN'"),
  );
  await p.start();
});

describe("a secret that cannot be decrypted", () => {
  it("the daemon starts and its log names the secret and what uses it, never a value", () => {
    const log = p.daemonStderr();
    const warned = log.split("\n").find((l) => l.includes("a stored secret cannot be decrypted"));
    expect(warned).toBeDefined();
    expect(JSON.parse(warned!)).toMatchObject({ level: "warn", org: "default", secret: "BROKEN" });
    for (const what of ["models.keyed.api_key", "mcp.locked.args[1]", "slack.bot_token"]) {
      expect(log.split("\n").some((l) => l.includes(what) && DECRYPT.test(l))).toBe(true);
    }
    expect(log).not.toContain(GOOD);
    expect(log).not.toContain(BROKEN);
  });

  it("wardrik secret ls marks it, with and without a running daemon", async () => {
    const text = await p.cli(["secret", "ls"]);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(/^BROKEN {2}\(unreadable: secret BROKEN cannot be decrypted: .*\)\nGOOD\n$/);
    const json = await p.cli(["secret", "ls", "--json"]);
    expect(JSON.parse(json.stdout)).toEqual({
      secrets: ["BROKEN", "GOOD"],
      unreadable: [{ name: "BROKEN", error: expect.stringMatching(DECRYPT) }],
    });
    await p.stop();
    try {
      const offline = await p.cli(["secret", "ls", "--json"]);
      expect(JSON.parse(offline.stdout)).toEqual(JSON.parse(json.stdout));
    } finally {
      await p.start();
    }
  });

  it("an agent that does not need it answers; one whose model needs it says which secret", async () => {
    const { end } = await p.send("fine", "hello");
    expect(short(end.type)).toBe("turn.completed");
    expect(end.data.reply).toBe("You said: hello");
    const keyed = await p.apiOk<{ status: string; reason?: string }>("GET", `/v1/agents/${await p.agentId("keyed")}`);
    expect(keyed.status).toBe("unreadable");
    expect(keyed.reason).toMatch(DECRYPT);
    // An agent file that names it itself.
    const hooked = await p.apiOk<{ status: string; reason?: string }>("GET", `/v1/agents/${await p.agentId("hooked")}`);
    expect(hooked).toMatchObject({ status: "unreadable", reason: expect.stringMatching(DECRYPT) });
    const ask = await p.cli(["ask", "keyed", "hello"]);
    expect(ask.code).not.toBe(0);
    expect(ask.stderr).toMatch(DECRYPT);
  });

  it("an MCP server given it is down, saying which secret; it never starts", async () => {
    const show = await p.apiOk<{ tool_sources: { name: string; status: string; reason?: string }[] }>(
      "GET",
      `/v1/agents/${await p.agentId("locked")}`,
    );
    expect(show.tool_sources).toEqual([{ name: "locked", status: "down", reason: expect.stringMatching(DECRYPT) }]);
    const tools = await p.cli(["tools", "locked"]);
    expect(tools.stdout + tools.stderr).toMatch(DECRYPT);
    const ls = await p.cli(["mcp", "ls", "--json"]);
    expect(JSON.parse(ls.stdout)).toEqual([
      expect.objectContaining({ name: "locked", status: "down", reason: expect.stringMatching(DECRYPT) }),
    ]);
    expect(p.daemonStderr()).not.toMatch(/quoting starting/);
  });

  it("Slack, whose token it is, is off (its routes answer 404), and the log says why", async () => {
    const r = await p.api("POST", "/v1/slack/events", { type: "url_verification", challenge: "x" }, { token: null });
    expect(r.status).toBe(404);
    const off = p
      .daemonStderr()
      .split("\n")
      .find((l) => l.includes("slack of config.yaml is off"));
    expect(JSON.parse(off!)).toMatchObject({
      level: "error",
      part: "slack",
      reason: expect.stringMatching(/^config\.yaml slack\.bot_token: /),
    });
  });
});
