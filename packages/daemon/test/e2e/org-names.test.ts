/**
 * `org/name` in every CLI command that takes an agent: the admin token
 * reaches an agent of any org; an org token reaches only its own org, and
 * naming another gets an error that says so (the same whether that org exists
 * or not).
 */
import { beforeAll, describe, expect, it } from "vitest";
import { createProject, runOfMessage, short, waitFor, type TestProject, type WireEvent } from "../helpers/spawn-daemon.js";

let p: TestProject;
let acmeToken: string;
let botId: string;

const SCRIPT = `steps:
  - tool_calls:
      - tool: files/write
        args: { path: "note.md", content: "{{message}}" }
  - text: "noted: {{message}}"
`;
const POLICY = `description: Writes need a person.
rules:
  - tool: files/write
    decision: ask
    reason: Writing needs a person's OK.
`;

beforeAll(async () => {
  p = await createProject({ scripts: { noter: SCRIPT }, files: { "policies/careful.yaml": POLICY } });
  acmeToken = (await p.apiOk<{ token: string }>("POST", "/v1/tokens", { org: "acme" })).token;
  // An agent of org acme, made through the API with acme's own token.
  const made = await p.api<{ id: string; org: string }>(
    "POST",
    "/v1/agents",
    { name: "bot", description: "acme's bot", model: "noter", tools: ["files"], policy: "careful" },
    { token: acmeToken },
  );
  expect(made.status, made.text).toBe(201);
  botId = made.json.id;
});

// A well-formed call ID: the refusal must come from the org, not from the ID.
const FAKE_CALL = "call_01ARZ3NDEKTSV4RRFFQ69G5FAV";

// WARDRIK_TOKEN overrides the admin token of the project directory.
const asAcme = () => ({ env: { WARDRIK_TOKEN: acmeToken } });

describe("org/name with the admin token", () => {
  it("ask, approve, agent show, tools, events and history reach an agent of another org", async () => {
    const ask = p.spawnCli(["ask", "acme/bot", "from the admin"]);
    await ask.waitForOutput((_o, err) => /wardrik approve acme\/bot call_/.test(err));
    const call = /wardrik approve acme\/bot (call_[0-9A-Z]{26})/.exec(ask.stderr())![1]!;

    const show = await p.cli(["agent", "show", "acme/bot", "--json"]);
    expect(show.code, show.stderr).toBe(0);
    const detail = JSON.parse(show.stdout) as { id: string; org: string; waiting_calls: { call: string }[] };
    expect(detail).toMatchObject({ id: botId, org: "acme", waiting_calls: [{ call }] });
    const text = await p.cli(["agent", "show", "acme/bot"]);
    expect(text.stdout).toContain(`approve: wardrik approve acme/bot ${call}`);

    const tools = await p.cli(["tools", "acme/bot", "--json"]);
    expect(tools.code, tools.stderr).toBe(0);
    expect((JSON.parse(tools.stdout) as { tools: { name: string }[] }).tools.map((t) => t.name)).toContain("files/write");

    const approved = await p.cli(["approve", "acme/bot", call]);
    expect(approved.code, approved.stderr).toBe(0);
    const done = await ask.done;
    expect(done.code, done.stderr).toBe(0);
    expect(done.stdout).toBe("noted: from the admin\n");

    const events = await p.cli(["events", "acme/bot", "--json"]);
    expect(events.code, events.stderr).toBe(0);
    const types = events.stdout
      .trim()
      .split("\n")
      .map((l) => short((JSON.parse(l) as { type: string }).type));
    expect(types).toContain("approval.granted");
    const history = await p.cli(["history", "acme/bot", "--json"]);
    expect(JSON.parse(history.stdout)).toMatchObject({ messages: expect.arrayContaining([expect.objectContaining({ role: "user" })]) });

    const cleared = await p.cli(["agent", "clear", "acme/bot", "--json"]);
    expect(JSON.parse(cleared.stdout)).toEqual({ cleared: ["main"] });
    const cancelled = await p.cli(["agent", "cancel", "acme/bot", "--json"]);
    expect(JSON.parse(cancelled.stdout)).toEqual({ cancelled: [], dropped: 0 });
  });

  it("deny, agent kill and agent rm reach an agent of another org", async () => {
    const made = await p.api<{ id: string }>(
      "POST",
      "/v1/agents",
      { name: "bot2", description: "acme's second bot", model: "noter", tools: ["files"], policy: "careful" },
      { token: acmeToken },
    );
    expect(made.status, made.text).toBe(201);
    const id = made.json.id;
    // Messages and events go through acme's own token; only the commands under test use the admin's.
    const acmeEvent = (match: (e: WireEvent) => boolean) =>
      waitFor(async () => {
        const page = await p.api<{ events: WireEvent[] }>("GET", `/v1/agents/${id}/events?limit=1000`, undefined, { token: acmeToken });
        return page.json.events.find(match);
      }, `an event of acme/bot2`);
    for (const verb of [["deny"], ["agent", "kill"]]) {
      const sent = await p.api<{ message: string }>("POST", `/v1/agents/${id}/messages`, { text: verb.join(" ") }, { token: acmeToken });
      expect(sent.status, sent.text).toBe(202);
      const started = await acmeEvent((e) => short(e.type) === "turn.started" && runOfMessage([e], sent.json.message) !== undefined);
      const asked = await acmeEvent((e) => short(e.type) === "approval.requested" && e.run === started.run);
      const call = String(asked.data.call);
      const r = await p.cli([...verb, "acme/bot2", call, "--json"]);
      expect(r.code, `${verb.join(" ")}: ${r.stderr}`).toBe(0);
      expect(JSON.parse(r.stdout)).toMatchObject({ call, tool: "files/write" });
      const answer = verb[0] === "deny" ? "approval.denied" : "call.killed";
      await acmeEvent((e) => e.seq > asked.seq && e.data.call === call && short(e.type) === answer);
      await acmeEvent((e) => e.run === started.run && /turn\.(completed|failed|cancelled)$/.test(e.type));
    }
    const removed = await p.cli(["agent", "rm", "acme/bot2", "--json"]);
    expect(removed.code, removed.stderr).toBe(0);
    expect(JSON.parse(removed.stdout)).toEqual({ removed: id, name: "bot2", org: "acme" });
    expect((await p.api("GET", `/v1/agents/${id}`, undefined, { token: acmeToken })).status).toBe(404);
  });

  it("a name that is not in that org lists the org's agents", async () => {
    const r = await p.cli(["agent", "show", "acme/nobody"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("No agent acme/nobody. Agents in org acme: acme/bot.");
    const empty = await p.cli(["agent", "show", "ghost/nobody"]);
    expect(empty.stderr).toContain("No agent ghost/nobody. Org ghost has no agents.");
  });

  it("a malformed name is refused", async () => {
    const r = await p.cli(["agent", "show", "a/b/c"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/"a\/b\/c" is not an agent name: write NAME, or ORG\/NAME/);
  });
});

describe("org/name with an org's token", () => {
  it("reaches its own org, by name or by org/name", async () => {
    for (const ref of ["bot", "acme/bot"]) {
      const r = await p.cli(["agent", "show", ref, "--json"], asAcme());
      expect(r.code, r.stderr).toBe(0);
      expect((JSON.parse(r.stdout) as { id: string }).id).toBe(botId);
    }
  });

  it("naming another org is refused with a clear error, whether or not that org exists", async () => {
    for (const ref of ["default/helper", "ghost/helper"]) {
      const org = ref.split("/")[0];
      for (const args of [
        ["agent", "show", ref],
        ["ask", ref, "hi", "--no-wait"],
        ["tools", ref],
        ["deny", ref, FAKE_CALL],
        ["agent", "kill", ref, FAKE_CALL],
        ["agent", "rm", ref],
      ]) {
        const r = await p.cli(args, asAcme());
        expect(r.code, `${args.join(" ")}: ${r.stderr}`).toBe(1);
        expect(r.stderr).toContain(`This token belongs to org acme and can only reach that org; use the admin token to reach org ${org}.`);
      }
    }
    // Nothing reached the default org's helper, and it is still there.
    const helper = await p.agentId("helper");
    expect((await p.events(helper)).some((e) => short(e.type) === "message.queued")).toBe(false);
  });
});
