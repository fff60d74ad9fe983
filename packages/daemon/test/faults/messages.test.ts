/**
 * Fault injection across conversations: messages accepted by the API just before
 * a SIGKILL, and several conversations caught mid-round by one.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { waitUntil } from "./fault-api.js";
import { callsByTool, faultProject, ofType, runOf, turnEvents, type FaultProject } from "./fault-project.js";

let f: FaultProject;
beforeAll(async () => {
  f = await faultProject({
    queued: { toolMs: { lookup: 300, upsert: 300, charge: 300 } },
    // First runs last until released: past the restart, however long it takes on a busy machine.
    multi: { toolMs: { lookup: 1500, upsert: 1500, charge: 1500 }, rerunMs: 50, hold: ["lookup", "upsert", "charge"] },
  });
});

const userTexts = async (conversation: string): Promise<string[]> => {
  const h = await f.p.apiOk<{ messages: { role: string; content: { text?: string } }[] }>(
    "GET",
    `/v1/agents/${f.agentId}/conversations/${conversation}/messages`,
  );
  return h.messages.filter((m) => m.role === "user").map((m) => m.content.text ?? "");
};

describe("messages and conversations through a crash", () => {
  it("messages accepted right before the crash are never lost and each gets exactly one turn", { timeout: 60_000 }, async () => {
    const sent: [string, string][] = [
      ["main", "queued-a1"],
      ["main", "queued-a2"],
      ["second", "queued-b1"],
      ["third", "queued-c1"],
      ["third", "queued-c2"],
    ];
    const ids: string[] = [];
    for (const [conversation, text] of sent) ids.push(await f.send(text, conversation));
    // SIGKILL right after the last 202: whatever the daemon had done with them by then, they are accepted.
    await f.crash();
    await f.restart();
    const { events } = await f.settleAndCheck(ids);

    // Exactly one turn per message (checked by settleAndCheck) and every turn completed; the history has each message once.
    const runs = new Set(ids.map((m) => runOf(events, m)));
    for (const run of runs)
      expect(events.filter((e) => e.run === run).map((e) => e.type.replace("dev.wardrik.", ""))).toContain("turn.completed");
    for (const conversation of ["main", "second", "third"]) {
      expect(await userTexts(conversation)).toEqual(sent.filter(([c]) => c === conversation).map(([, t]) => t));
    }
  });

  it(
    "three conversations mid-round: each safe call re-runs with its key, each unsafe call runs once, its answer kept by the worker",
    { timeout: 60_000 },
    async () => {
      const ids = [await f.send("multi-x", "mx"), await f.send("multi-y", "my"), await f.send("multi-z", "mz")];
      await waitUntil(
        () => f.logOf("multi-").filter((l) => l.phase === "start").length === 9,
        "nine calls started in the worker",
        20_000,
        5,
      );
      await f.crash();
      await f.restart();
      // Each safe call runs again with its key; then the held first runs may end (the unsafe ones' answers go to the restarted daemon).
      await waitUntil(() => f.logOf("multi-").filter((l) => l.phase === "start").length === 15, "the six safe calls to run again", 30_000);
      f.w.release("multi-");
      const { events, approved } = await f.settleAndCheck(ids);

      for (const m of ids) {
        const turn = turnEvents(events, m);
        const calls = callsByTool(turn);
        const starts = (id: string) => f.w.log().filter((l) => l.key === id && l.phase === "start");
        for (const tool of ["lookup", "upsert"]) expect(starts(calls[tool]!), tool).toHaveLength(2);
        // The unsafe call kept running in the worker through the crash, and its answer reached the restarted daemon.
        expect(starts(calls.charge!)).toHaveLength(1);
        expect(ofType(turn, "approval.requested")).toEqual([]);
        expect(ofType(turn, "turn.completed")).toHaveLength(1);
      }
      expect(approved.size).toBe(0);
    },
  );
});
