/**
 * Different conversations run at once; one conversation runs one turn at a time.
 * Overlap is asserted from the order of events in the agent's log, never from
 * wall-clock thresholds.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { agentFile, createProject, runOfMessage, short, waitFor, type TestProject, type WireEvent } from "../helpers/spawn-daemon.js";

let p: TestProject;
let id: string;

beforeAll(async () => {
  p = await createProject({
    // Messages that say "hold" take 1.5 s, long enough to send more while they run.
    scripts: {
      slow_echo: `scenarios:\n  - match: hold\n    steps:\n      - text: "done: {{message}}"\n        delay_ms: 1500\nsteps:\n  - text: "done: {{message}}"\n    delay_ms: 500\n`,
    },
    files: { "agents/slow.md": agentFile({ description: "Answers after half a second", model: "slow_echo" }) },
  });
  id = await p.agentId("slow");
});

const seqOf = (events: WireEvent[], type: string, run: string) => {
  const e = events.find((x) => x.run === run && short(x.type) === type);
  if (!e) throw new Error(`no ${type} for ${run}`);
  return e.seq;
};

// Each test uses conversations of its own and compares only its own turns, so they run at once.
describe.concurrent("conversations", () => {
  it("two conversations run their turns at the same time", async () => {
    // Both messages go out at once (two API calls, not two CLI processes whose start-up times would race the 500 ms).
    const [a, b] = await Promise.all([p.send(id, "first", "A"), p.send(id, "second", "B")]);
    expect(a.end.data.reply).toBe("done: first");
    expect(b.end.data.reply).toBe("done: second");
    const ta = { id: a.run };
    const tb = { id: b.run };

    const events = await p.events(id);
    // Each turn started before the other one ended: they overlapped.
    expect(seqOf(events, "turn.started", ta.id)).toBeLessThan(seqOf(events, "turn.completed", tb.id));
    expect(seqOf(events, "turn.started", tb.id)).toBeLessThan(seqOf(events, "turn.completed", ta.id));
  });

  it("one conversation takes one turn at a time: a message sent during a turn gets the next turn", async () => {
    const m1 = await p.apiOk<{ message: string }>("POST", `/v1/agents/${id}/messages`, { text: "hold one", conversation: "Q" });
    const run1 = await waitFor(async () => runOfMessage(await p.events(id), m1.message), "the first turn");
    const m2 = await p.apiOk<{ message: string }>("POST", `/v1/agents/${id}/messages`, { text: "two", conversation: "Q" });
    const run2 = await waitFor(async () => runOfMessage(await p.events(id), m2.message), "the second turn");
    expect(run2).not.toBe(run1);
    await p.waitForTurnEnd(id, run2);
    const events = await p.events(id);
    const queued2 = events.find((e) => short(e.type) === "message.queued" && e.data.message === m2.message)!.seq;
    // "two" arrived while the first turn ran, and its turn started only after the first ended.
    expect(queued2).toBeLessThan(seqOf(events, "turn.completed", run1));
    expect(seqOf(events, "turn.completed", run1)).toBeLessThan(seqOf(events, "turn.started", run2));
    const h = await p.apiOk<{ messages: { role: string; content: { text?: string } }[] }>(
      "GET",
      `/v1/agents/${id}/conversations/Q/messages`,
    );
    expect(h.messages.map((m) => m.content.text)).toEqual(["hold one", "done: hold one", "two", "done: two"]);
  });

  it("messages queued while a turn runs are taken together by the next turn", async () => {
    const first = await p.apiOk<{ message: string }>("POST", `/v1/agents/${id}/messages`, { text: "hold on", conversation: "R" });
    const run1 = await waitFor(async () => runOfMessage(await p.events(id), first.message), "the first turn");
    const x = await p.apiOk<{ message: string }>("POST", `/v1/agents/${id}/messages`, { text: "x", conversation: "R" });
    const y = await p.apiOk<{ message: string }>("POST", `/v1/agents/${id}/messages`, { text: "y", conversation: "R" });
    const run2 = await waitFor(async () => runOfMessage(await p.events(id), x.message), "the second turn");
    await p.waitForTurnEnd(id, run2);
    const events = await p.events(id);
    // Both were queued while the first turn ran, so the next turn took both.
    const queuedY = events.find((e) => short(e.type) === "message.queued" && e.data.message === y.message)!.seq;
    expect(queuedY).toBeLessThan(seqOf(events, "turn.completed", run1));
    expect(runOfMessage(events, y.message)).toBe(run2);
    const started = events.find((e) => e.run === run2 && short(e.type) === "turn.started")!;
    expect(started.data.messages).toEqual([x.message, y.message]);
    const turn = await p.apiOk<{ status: string; messages: string[] }>("GET", `/v1/agents/${id}/turns/${run2}`);
    expect(turn.status).toBe("completed");
    expect(turn.messages).toContain(x.message);
  });

  it("eight conversations at once all complete, each with its own reply", async () => {
    const keys = Array.from({ length: 8 }, (_, i) => `par${i}`);
    // "hold": 1.5 s each, so all eight are surely queued before the first can end.
    const posted = await Promise.all(
      keys.map((k) => p.apiOk<{ message: string }>("POST", `/v1/agents/${id}/messages`, { text: `hold ${k}`, conversation: k })),
    );
    const runs = await waitFor(async () => {
      const events = await p.events(id);
      const rs = posted.map((q) => runOfMessage(events, q.message));
      return rs.every(Boolean) ? (rs as string[]) : undefined;
    }, "eight turns to start");
    const ends = await Promise.all(runs.map((r) => p.waitForTurnEnd(id, r)));
    expect(ends.map((e) => e.data.reply)).toEqual(keys.map((k) => `done: hold ${k}`));
    const events = await p.events(id);
    // All eight started before any of them completed.
    const lastStart = Math.max(...runs.map((r) => seqOf(events, "turn.started", r)));
    const firstEnd = Math.min(...runs.map((r) => seqOf(events, "turn.completed", r)));
    expect(lastStart).toBeLessThan(firstEnd);
  });
});
