/**
 * `wardrik agent cancel` stops the running turn and drops queued messages;
 * `wardrik agent clear` empties the history while the event record stays.
 * Each test has an agent of its own, so they run at once.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { agentFile, createProject, runOfMessage, short, waitFor, type TestProject } from "../helpers/spawn-daemon.js";

let p: TestProject;
let ids: Record<string, string>;

// "hang" in the message: the model never answers (until the call is aborted); anything else is echoed.
const SCRIPT = `scenarios:
  - match: hang
    steps:
      - hang: true
steps:
  - text: "ok: {{message}}"
`;

const AGENTS = ["sleeper", "splitter", "idler", "clearer", "wiper"];

beforeAll(async () => {
  p = await createProject({
    scripts: { sometimes_hangs: SCRIPT },
    files: Object.fromEntries(
      AGENTS.map((name) => [
        `agents/${name}.md`,
        agentFile({ description: "Hangs when told to", model: "sometimes_hangs", tools: ["files"] }),
      ]),
    ),
  });
  const agents = await p.apiOk<{ agents: { id: string; name: string }[] }>("GET", "/v1/agents");
  ids = Object.fromEntries(agents.agents.map((a) => [a.name, a.id]));
});

interface History {
  messages: { role: string; content: { text?: string } }[];
}

const history = (id: string, conversation = "main") => p.apiOk<History>("GET", `/v1/agents/${id}/conversations/${conversation}/messages`);

describe.concurrent("wardrik agent cancel", () => {
  it("ends the running turn as cancelled, drops the queued message, both waiting asks exit 1 with the reason, and the conversation works again", async () => {
    const id = ids.sleeper!;
    const first = p.spawnCli(["ask", "sleeper", "please hang"]);
    const started = await p.waitForEvent(id, (e) => short(e.type) === "turn.started");
    const run = started.run!;
    // The agent shows as running meanwhile.
    const ls = await p.apiOk<{ status: string; conversations: { key: string; status: string }[] }>("GET", `/v1/agents/${id}`);
    expect(ls.status).toBe("running");
    expect(ls.conversations).toEqual([expect.objectContaining({ key: "main", status: "running" })]);

    const second = p.spawnCli(["ask", "sleeper", "queued behind it"]);
    const queued = await p.waitForEvent(id, (e) => short(e.type) === "message.queued" && e.data.text === "queued behind it");

    const cancel = await p.cli(["agent", "cancel", "sleeper"]);
    expect(cancel.code, cancel.stderr).toBe(0);
    expect(cancel.stdout.trim()).toBe("Cancelled 1 turn(s), dropped 1 queued message(s).");

    const r1 = await first.done;
    expect(r1.code).toBe(1);
    expect(r1.stdout).toBe("");
    expect(r1.stderr).toMatch(/The turn cancelled: Cancelled by a person\./);

    const r2 = await second.done;
    expect(r2.code).toBe(1);
    expect(r2.stderr).toMatch(/dropped/);

    const events = await p.events(id);
    const ended = events.find((e) => e.run === run && /turn\.(completed|failed|cancelled)$/.test(e.type));
    expect(short(ended!.type)).toBe("turn.cancelled");
    expect(ended!.data.reason).toBe("Cancelled by a person.");
    const dropped = events.find((e) => short(e.type) === "messages.dropped");
    expect(dropped!.data.count).toBe(1);
    expect(dropped!.seq).toBeGreaterThan(queued.seq);
    // The dropped message never started a turn.
    expect(runOfMessage(events, String(queued.data.message))).toBeUndefined();

    const turn = await p.apiOk<{ status: string; reason: string }>("GET", `/v1/agents/${id}/turns/${run}`);
    expect(turn.status).toBe("cancelled");
    expect((await p.apiOk<{ status: string }>("GET", `/v1/agents/${id}`)).status).toBe("idle");

    // The conversation is usable again.
    const { end } = await p.send(id, "are you back?");
    expect(end.data.reply).toBe("ok: are you back?");
  });

  it("--conversation cancels only that conversation", async () => {
    const id = ids.splitter!;
    const a = await p.apiOk<{ message: string }>("POST", `/v1/agents/${id}/messages`, { text: "hang in A", conversation: "A" });
    const b = await p.apiOk<{ message: string }>("POST", `/v1/agents/${id}/messages`, { text: "hang in B", conversation: "B" });
    const runA = await waitFor(async () => runOfMessage(await p.events(id), a.message), "turn A");
    const runB = await waitFor(async () => runOfMessage(await p.events(id), b.message), "turn B");

    const r = await p.cli(["agent", "cancel", "splitter", "--conversation", "A"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.trim()).toBe("Cancelled 1 turn(s), dropped 0 queued message(s).");
    expect(short((await p.waitForTurnEnd(id, runA)).type)).toBe("turn.cancelled");
    const turnB = await p.apiOk<{ status: string }>("GET", `/v1/agents/${id}/turns/${runB}`);
    expect(turnB.status).toBe("running");

    // Clearing a conversation with a turn in progress is refused with what to do.
    const clear = await p.api<{ code: string; detail: string }>("POST", `/v1/agents/${id}/clear`, { conversation: "B" });
    expect(clear.status).toBe(409);
    expect(clear.json.detail).toMatch(/turn in progress; cancel it first \(wardrik agent cancel splitter\)/);

    const all = await p.apiOk<{ cancelled: string[]; dropped: number }>("POST", `/v1/agents/${id}/cancel`, {});
    expect(all).toEqual({ cancelled: [runB], dropped: 0 });
    expect(short((await p.waitForTurnEnd(id, runB)).type)).toBe("turn.cancelled");
  });

  it("with nothing running, cancel does nothing and says so", async () => {
    const r = await p.apiOk<{ cancelled: string[]; dropped: number }>("POST", `/v1/agents/${ids.idler}/cancel`, {});
    expect(r).toEqual({ cancelled: [], dropped: 0 });
  });
});

describe.concurrent("wardrik agent clear", () => {
  it("empties the history; the events stay; the next turn starts from an empty history", async () => {
    const id = ids.clearer!;
    await p.send(id, "before the clear");
    expect((await history(id)).messages).toHaveLength(2);
    const before = await p.events(id);

    const r = await p.cli(["agent", "clear", "clearer", "--conversation", "main"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.trim()).toBe("Cleared main.");
    expect((await history(id)).messages).toEqual([]);

    const after = await p.events(id);
    // Nothing was taken out of the record; one conversation.cleared was added.
    expect(after.slice(0, before.length)).toEqual(before);
    expect(after.slice(before.length).map((e) => short(e.type))).toEqual(["conversation.cleared"]);
    expect(after.some((e) => short(e.type) === "turn.completed" && e.data.reply === "ok: before the clear")).toBe(true);

    const turn = { id: (await p.send(id, "fresh start")).run };
    expect((await history(id)).messages.map((m) => `${m.role}: ${m.content.text ?? ""}`)).toEqual([
      "user: fresh start",
      "assistant: ok: fresh start",
    ]);
    // The model was sent only the system prompt and the new message.
    const called = (await p.events(id)).find((e) => e.run === turn.id && short(e.type) === "model.replied");
    expect(called!.data.messages).toBe(2);
  });

  it("without --conversation clears every conversation", async () => {
    const id = ids.wiper!;
    await Promise.all(["main", "A", "B"].map((c) => p.send(id, `hello ${c}`, c)));
    const r = await p.cli(["agent", "clear", "wiper"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.trim()).toMatch(/^Cleared .+\.$/);
    for (const c of ["main", "A", "B"]) {
      expect(r.stdout).toContain(c);
      expect((await history(id, c)).messages).toEqual([]);
    }
  });
});
