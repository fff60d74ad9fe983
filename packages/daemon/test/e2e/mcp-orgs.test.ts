/**
 * MCP servers of config.yaml belong to config.yaml's org: they carry its
 * credentials. Another org's agent cannot list or call them, nor learn that
 * they exist, unless the server names that org in `orgs:`. Two real stdio
 * servers (the quoting fixture, which returns the arguments it was started
 * with): `private`, given the config org's secret, and `lent`, given another
 * of its secrets and granted to org acme. Agents of acme and of another org try both. And a server of acme
 * alone (`orgs.acme.mcp`), server-everything from npm given acme's secret:
 * acme's agent reads it (blanked); no other org's agent, config.yaml's own
 * included, can reach it.
 */
import { createRequire } from "node:module";
import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import { agentFile, createProject, short, waitFor, type TestProject, type WireEvent } from "../helpers/spawn-daemon.js";

const SECRET = "mo-7d1c0e5b9a2f44-PRIVATE";
const LENT = "lent-4b8e2a6c1d9f-CRED";
const MCP_FIXTURE = fileURLToPath(new URL("./fixtures/quoting-mcp.mjs", import.meta.url));
const EVERYTHING = createRequire(import.meta.url).resolve("@modelcontextprotocol/server-everything/dist/index.js");
const ACME_KEY = "acme-own-5e8d2c1f9b7a-KEY";
const OWN = `steps:
  - tool_calls: [{ tool: acmeown/get-env }]
  - text: "done"
`;
// Sends the message to the lent server's echo, asks the server to quote its own arguments, and says the message back.
const GUESS = `steps:
  - tool_calls: [{ tool: lent/echo, args: { text: "{{message}}" } }]
  - tool_calls: [{ tool: lent/deep }]
  - text: "You said: {{message}}"
`;
const TRY_BOTH = `steps:
  - tool_calls: [{ tool: private/deep }]
  - tool_calls: [{ tool: lent/deep }]
  - text: "done"
`;

let p: TestProject;
const tokens: Record<string, string> = {};
const agents: Record<string, string> = {};

function server(name: string, extra: string): string {
  const args = JSON.stringify([MCP_FIXTURE, name, extra]);
  return `  ${name}:\n    command: ${JSON.stringify(process.execPath)}\n    args: ${args}\n`;
}

beforeAll(async () => {
  p = await createProject({
    scripts: { both: TRY_BOTH, own: OWN, guess: GUESS },
    files: {
      "agents/home.md": agentFile({ description: "The config org's agent", model: "both", tools: ["private/*", "lent/*"], policy: "open" }),
      "agents/home-own.md": agentFile({
        description: "The config org's agent, after acme's server",
        model: "own",
        tools: ["*"],
        policy: "open",
      }),
      "policies/open.yaml": 'description: Everything runs.\nrules:\n  - tool: "*"\n    decision: allow\n',
    },
  });
  expect((await p.api("POST", "/v1/secrets/PRIVATE_TOKEN", { value: SECRET })).status).toBe(200);
  expect((await p.api("POST", "/v1/secrets/LENT_TOKEN", { value: LENT })).status).toBe(200);
  const acmeKey = await p.api("POST", "/v1/secrets/ACME_KEY", { value: ACME_KEY }, { headers: { "wardrik-org": "acme" } });
  expect(acmeKey.status, acmeKey.text).toBe(200);
  await p.stop();
  const own = `orgs:\n  acme:\n    mcp:\n      acmeown:\n        command: ${JSON.stringify(process.execPath)}\n        args: [${JSON.stringify(EVERYTHING)}, stdio]\n        env: { ACME_KEY: "\${secret:ACME_KEY}" }\n`;
  const mcp = `mcp:\n${server("private", "${secret:PRIVATE_TOKEN}")}${server("lent", "${secret:LENT_TOKEN}")}    orgs: [acme]\n${own}`;
  // The fixture server's `deep` tool nests 1,000 levels: past the default limits.json_depth (64).
  p.write("config.yaml", `${p.read("config.yaml")}\nlimits:\n  json_depth: 2000\n${mcp}`);
  await p.start();
  for (const org of ["acme", "other"]) {
    tokens[org] = (await p.apiOk<{ token: string }>("POST", "/v1/tokens", { org })).token;
    // Made by the org itself: `tryer` with the same tool patterns and the same script as the config org's agent.
    const madeByOrg: [key: string, name: string, model: string, tools: string[]][] = [
      [org, "tryer", "both", ["private/*", "lent/*"]],
      [`${org}-owner`, "owner", "own", ["*"]],
      [`${org}-guesser`, "guesser", "guess", ["lent/*"]],
    ];
    for (const [key, name, model, tools] of madeByOrg) {
      const agent = await p.api("POST", "/v1/agents", { name, description: `${org}'s agent`, model, tools }, { token: tokens[org]! });
      expect(agent.status, agent.text).toBe(201);
      agents[key] = (agent.json as { id: string }).id;
    }
  }
});

async function runTurn(org: string, text = "try both", conversation = "main", agent = org): Promise<WireEvent[]> {
  const token = tokens[org]!;
  const id = agents[agent]!;
  const q = await p.api<{ message: string }>("POST", `/v1/agents/${id}/messages`, { text, conversation }, { token });
  expect(q.status, q.text).toBe(202);
  return waitFor(async () => {
    const r = await p.api<{ events: WireEvent[] }>("GET", `/v1/agents/${id}/events?limit=1000`, undefined, { token });
    const run = r.json.events.find(
      (e) => short(e.type) === "turn.started" && ((e.data.messages as string[] | undefined) ?? []).includes(q.json.message),
    )?.run;
    const ended = r.json.events.some((e) => e.run === run && /turn\.(completed|failed)$/.test(e.type));
    return ended ? r.json.events : undefined;
  }, `the turn of ${org}'s agent`);
}

function outcomes(events: WireEvent[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (const e of events) {
    const t = short(e.type);
    if (t === "call.completed") out[String(e.data.tool)] = "completed";
    if (t === "call.failed") out[String(e.data.tool)] = String(e.data.code);
  }
  return out;
}

describe("MCP servers and orgs", () => {
  it("config.yaml's org uses both servers", async () => {
    const { end } = await p.send("home", "try both");
    expect(short(end.type)).toBe("turn.completed");
    expect(outcomes(await p.events("home"))).toEqual({ "private/deep": "completed", "lent/deep": "completed" });
  });

  it("another org's agent can neither list nor call a server it is not granted; `orgs:` grants one", async () => {
    const acme = await runTurn("acme");
    expect(outcomes(acme)).toEqual({ "private/deep": "unknown_tool", "lent/deep": "completed" });
    const other = await runTurn("other");
    expect(outcomes(other)).toEqual({ "private/deep": "unknown_tool", "lent/deep": "unknown_tool" });
    // Not even a blanked trace of the private server's secret reached them.
    for (const events of [acme, other]) {
      expect(JSON.stringify(events)).not.toMatch(/PRIVATE_TOKEN|mo-7d1c/);
    }
  });

  it("what another org sees of the servers: only those granted to it, and the others as if config.yaml had none", async () => {
    const seen = async (org: string) => {
      const token = tokens[org]!;
      const list = await p.api<{ servers: { name: string }[] }>("GET", "/v1/mcp-servers", undefined, { token });
      const tools = await p.api<{ tools: { name: string }[]; unmatched: { pattern: string; reason: string }[] }>(
        "GET",
        `/v1/agents/${agents[org]!}/tools`,
        undefined,
        { token },
      );
      const show = await p.api<{ tool_sources: { name: string }[] }>("GET", `/v1/agents/${agents[org]!}`, undefined, { token });
      return {
        servers: list.json.servers.map((s) => s.name).sort(),
        one: (await p.api("GET", "/v1/mcp-servers/private", undefined, { token })).status,
        login: (await p.api("POST", "/v1/mcp-servers/private/login", {}, { token })).status,
        tools: tools.json.tools.map((t) => t.name),
        unmatched: tools.json.unmatched.find((u) => u.pattern === "private/*")?.reason,
        sources: show.json.tool_sources.map((s) => s.name),
      };
    };
    const acme = await seen("acme");
    // acme's own server too (orgs.acme.mcp); config.yaml's org does not see it.
    expect(acme).toMatchObject({
      servers: ["acmeown", "lent"],
      one: 404,
      login: 404,
      tools: ["lent/deep", "lent/echo"],
      sources: ["lent"],
    });
    expect(acme.unmatched).toMatch(/^no tool namespace "private"/);
    expect(acme.unmatched).not.toMatch(/namespaces are .*private/);
    const other = await seen("other");
    expect(other).toMatchObject({ servers: [], one: 404, login: 404, tools: [], sources: [] });
    // The config org still sees both.
    const home = await p.apiOk<{ servers: { name: string }[] }>("GET", "/v1/mcp-servers");
    expect(home.servers.map((s) => s.name).sort()).toEqual(["lent", "private"]);
    const cli = await p.cli(["mcp", "ls", "--json"], { env: { WARDRIK_URL: p.url, WARDRIK_TOKEN: tokens.acme } });
    expect(cli.code, cli.stderr).toBe(0);
    expect((JSON.parse(cli.stdout) as { name: string }[]).map((s) => s.name).sort()).toEqual(["acmeown", "lent"]);
  });

  it("redaction is per org: another org's secret in a message comes back as it was sent, so a guess of it is not confirmed", async () => {
    const ACME_VALUE = "acme-3f9e1b7c2d-OWN-VALUE";
    const set = await p.api("POST", "/v1/secrets/ACME_TOKEN", { value: ACME_VALUE }, { headers: { "wardrik-org": "acme" } });
    expect(set.status, set.text).toBe(200);
    const guess = `is it ${SECRET} and mine ${ACME_VALUE}`;
    const queuedText = (events: WireEvent[]) =>
      events
        .filter((e) => short(e.type) === "message.queued")
        .map((e) => String(e.data.text))
        .find((t) => t.startsWith("is it"));
    // acme's own secret is blanked in acme's events and message rows; the config org's value is not recognised there.
    const acme = await runTurn("acme", guess, "guess");
    expect(queuedText(acme)).toBe(`is it ${SECRET} and mine [secret:ACME_TOKEN]`);
    const rows = await p.api<{ messages: { content: { text?: string } }[] }>(
      "GET",
      `/v1/agents/${agents.acme!}/conversations/guess/messages`,
      undefined,
      { token: tokens.acme! },
    );
    expect(rows.json.messages[0]!.content.text).toBe(`is it ${SECRET} and mine [secret:ACME_TOKEN]`);
    expect(JSON.stringify(acme)).not.toMatch(/PRIVATE_TOKEN|acme-3f9e1b7c2d/);
    // The config org sees the reverse: its own value blanked, acme's not recognised.
    await p.send("home", guess, "guess");
    expect(queuedText(await p.events("home"))).toBe("is it [secret:PRIVATE_TOKEN] and mine " + ACME_VALUE);
    // The daemon's own log blanks every org's values.
    for (const value of [SECRET, ACME_VALUE]) expect(p.daemonStderr() + p.daemonStdout()).not.toContain(value);
  });

  it("a lent server's own credential is blanked in what it says for every org, yet an org that sends it gets it back as sent: no guess is confirmed", async () => {
    // What acme reads of one turn: the message, the echo, the server quoting its arguments, the reply.
    const seenBy = async (guess: string, conversation: string) => {
      const all = await runTurn("acme", `is it ${guess}?`, conversation, "acme-guesser");
      const queued = all.find((e) => short(e.type) === "message.queued" && e.data.conversation === conversation)!;
      const run = all.find(
        (e) => short(e.type) === "turn.started" && (e.data.messages as string[]).includes(String(queued.data.message)),
      )!.run;
      const events = all.filter((e) => e.run === run);
      expect(outcomes(events)).toEqual({ "lent/echo": "completed", "lent/deep": "completed" });
      const output = (tool: string) =>
        events.find((e) => short(e.type) === "call.completed" && e.data.tool === tool)!.data.output as { text?: string };
      return {
        queued: String(queued.data.text),
        echo: JSON.stringify(output("lent/echo")),
        // What the server said 1,000 levels down: the arguments it was started with.
        deep: /"said":"([^"]*)"/.exec(JSON.stringify(output("lent/deep")))?.[1],
        reply: String(events.find((e) => short(e.type) === "turn.completed")!.data.reply),
      };
    };
    const right = await seenBy(LENT, "guess-right");
    const wrong = await seenBy("lent-0a0a0a0a0a0a-CRED", "guess-wrong");
    // The value acme sent comes back as sent, in its message, the echo and the reply, right or wrong.
    expect(right.queued).toContain(`is it ${LENT}?`);
    // In one answer, the server quoting acme's text and its own credential: the one is as sent, the other blanked.
    expect(right.echo).toContain(`echo: is it ${LENT}?; started with lent [secret:LENT_TOKEN]`);
    expect(right.reply).toContain(`You said: is it ${LENT}?`);
    // The server quoting its own credential, unasked, is blanked for acme as for config.yaml's org.
    expect(right.deep).toBe("started with lent [secret:LENT_TOKEN]");
    // The right guess and a wrong one read alike: nothing tells acme which one is the credential.
    const unlike = (seen: Awaited<ReturnType<typeof seenBy>>, guess: string) =>
      [seen.queued, seen.echo, seen.deep, seen.reply].map((t) => t?.split(guess).join("GUESS"));
    expect(unlike(right, LENT)).toEqual(unlike(wrong, "lent-0a0a0a0a0a0a-CRED"));
    // config.yaml's org owns the credential: it is blanked in everything that org reads.
    const { end } = await p.send("home", `is it ${LENT}?`, "lent-guess");
    expect(short(end.type)).toBe("turn.completed");
    expect(JSON.stringify(await p.events("home"))).not.toContain(LENT);
  });

  it("an org's own server (orgs.ORG.mcp) carries that org's secret and serves that org alone", async () => {
    const acme = await runTurn("acme", "read your env", "main", "acme-owner");
    expect(outcomes(acme)).toEqual({ "acmeown/get-env": "completed" });
    // acme's ${secret:ACME_KEY} reached the server (its env is quoted back), blanked on the way to acme's record.
    const completed = acme.find((e) => short(e.type) === "call.completed")!;
    expect(JSON.stringify(completed.data)).toContain("[secret:ACME_KEY]");
    expect(JSON.stringify(acme)).not.toContain(ACME_KEY);
    // Neither another org's agent nor config.yaml's own can list or call it.
    const other = await runTurn("other", "read your env", "main", "other-owner");
    expect(outcomes(other)).toEqual({ "acmeown/get-env": "unknown_tool" });
    const { end } = await p.send("home-own", "read your env");
    expect(short(end.type)).toBe("turn.completed");
    expect(outcomes(await p.events("home-own"))).toEqual({ "acmeown/get-env": "unknown_tool" });
    expect((await p.api("GET", "/v1/mcp-servers/acmeown")).status).toBe(404);
    expect((await p.api("GET", "/v1/mcp-servers/acmeown", undefined, { token: tokens.acme! })).status).toBe(200);
    for (const events of [other, await p.events("home-own")]) expect(JSON.stringify(events)).not.toMatch(/ACME_KEY|acme-own-5e8d/);
  });
});
