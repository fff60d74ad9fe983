/**
 * Agent IDs and conversations survive a daemon restart, both a clean one
 * (SIGTERM) and a crash (SIGKILL) after the turn committed.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { AGENT_ID, agentFile, createProject, runOfMessage, waitFor, type TestProject } from "../helpers/spawn-daemon.js";

let p: TestProject;
let ids: Record<string, string>;

const listIds = async (): Promise<Record<string, string>> => {
  const r = await p.apiOk<{ agents: { id: string; name: string }[] }>("GET", "/v1/agents");
  return Object.fromEntries(r.agents.map((a) => [a.name, a.id]));
};

/** Queues a message through the API and polls (no event stream) until its turn has ended. */
async function askByApi(agentId: string, text: string, conversation = "main"): Promise<string> {
  const q = await p.apiOk<{ message: string }>("POST", `/v1/agents/${agentId}/messages`, { text, conversation });
  const run = await waitFor(async () => runOfMessage(await p.events(agentId), q.message), "the turn to start");
  const end = await p.waitForTurnEnd(agentId, run);
  expect(end.type).toBe("dev.wardrik.turn.completed");
  return run;
}

const userTexts = async (agentId: string, conversation = "main") => {
  const h = await p.apiOk<{ messages: { role: string; content: { text?: string } }[] }>(
    "GET",
    `/v1/agents/${agentId}/conversations/${conversation}/messages`,
  );
  return h.messages.filter((m) => m.role === "user").map((m) => m.content.text);
};

beforeAll(async () => {
  p = await createProject({ files: { "agents/echoer.md": agentFile({ description: "Echoes", model: "script/echo" }) } });
  ids = await listIds();
});

describe("daemon restart", () => {
  it("agent IDs are agt_ + a 26-character ULID", () => {
    expect(Object.keys(ids).sort()).toEqual(["echoer", "helper"]);
    for (const id of Object.values(ids)) expect(id).toMatch(AGENT_ID);
  });

  it("after SIGTERM and a new start: the same IDs, the same history, and the agent answers", async () => {
    await askByApi(ids.echoer!, "before restart");
    const stop = await p.stop();
    expect(stop.forced).toBe(false);
    expect(stop.code).toBe(0);
    await p.start();

    const r = await p.cli(["ls", "--json"]);
    expect(r.code, r.stderr).toBe(0);
    const after = Object.fromEntries((JSON.parse(r.stdout) as { id: string; name: string; status: string }[]).map((a) => [a.name, a.id]));
    expect(after).toEqual(ids);

    expect(await userTexts(ids.echoer!)).toEqual(["before restart"]);
    const { end } = await p.send(ids.echoer!, "after restart");
    expect(end.data.reply).toBe("You said: after restart");
    expect(await userTexts(ids.echoer!)).toEqual(["before restart", "after restart"]);
  });

  it("after SIGKILL (a crash): the same IDs, and every turn that completed is still there", async () => {
    await askByApi(ids.helper!, "committed before the crash", "crash");
    const k = await p.kill();
    expect(k.signal).toBe("SIGKILL");
    await p.start();
    expect(await listIds()).toEqual(ids);
    expect(await userTexts(ids.helper!, "crash")).toEqual(["committed before the crash"]);
    expect(await userTexts(ids.echoer!)).toEqual(["before restart", "after restart"]);
    // Event sequence numbers go on from where they were: no gap, no repeat.
    const seqs = (await p.events(ids.helper!)).map((e) => e.seq);
    expect(seqs).toEqual(seqs.map((_, i) => i + 1));
  });
});
