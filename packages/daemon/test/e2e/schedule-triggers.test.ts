/**
 * Schedule triggers on the real daemon: a 1-second schedule queues a message
 * every second into its conversation, `agent show` tells the next run and the
 * last firing, a schedule missed while the daemon was down fires once at
 * start (unless catch_up is false), and a schedule wakes an asleep agent.
 */
import { beforeAll, describe, expect, it } from "vitest";
import type { AgentDetail } from "@wardrik/protocol";
import { agentFile, createProject, short, waitFor, type TestProject } from "../helpers/spawn-daemon.js";

let p: TestProject;

const schedule = (fields: Record<string, unknown>, idle: number | "infinity" = "infinity") =>
  agentFile({ description: "Runs on a schedule", model: "script/echo", idle_timeout: idle, triggers: [fields] });

/** The scheduled times (and whether each fired late) of an agent's queued messages, from their text. */
async function firings(agent: string): Promise<{ time: number; missed: boolean }[]> {
  return (await p.events(agent))
    .filter((e) => short(e.type) === "message.queued")
    .map((e) => /^tick (\S+) missed=(true|false)$/.exec(e.data.text as string))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => ({ time: Date.parse(m[1]!), missed: m[2] === "true" }));
}

beforeAll(async () => {
  p = await createProject({
    files: {
      "agents/ticker.md": schedule({ schedule: "* * * * * *", message: "tick {{time}} missed={{missed}}", conversation: "ticks" }),
      "agents/punctual.md": schedule({ schedule: "* * * * * *", catch_up: false, message: "tick {{time}} missed={{missed}}" }),
      "agents/napper.md": schedule({ schedule: "*/3 * * * * *", message: "wake up" }, 1),
    },
  });
});

describe("schedule triggers", () => {
  it("a 1-second schedule queues a message every second into its conversation", async () => {
    const ends = await waitFor(async () => {
      const done = (await p.events("ticker")).filter((e) => short(e.type) === "turn.completed");
      return done.length >= 3 ? done : undefined;
    }, "three scheduled turns");
    // On a busy machine a second may come due between the agent's load and the schedule's start: that one fires at
    // start, late (missed=true), as a catch-up does; the others on time.
    expect(ends[0]!.data.reply).toMatch(/^You said: tick \d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.000Z missed=(true|false)$/);
    const ticks = await firings("ticker");
    expect(ticks.filter((f) => !f.missed).length).toBeGreaterThan(0);
    expect(ticks.filter((f) => f.missed).length).toBeLessThanOrEqual(1);
    const times = ticks.map((f) => f.time);
    // One firing per second, none twice.
    expect(new Set(times).size).toBe(times.length);
    expectEverySecond(times);
    const convs = await p.apiOk<{ conversations: { key: string }[] }>("GET", `/v1/agents/${await p.agentId("ticker")}/conversations`);
    expect(convs.conversations.map((c) => c.key)).toEqual(["ticks"]);
    // Without a conversation key, each trigger has its own.
    await waitFor(async () => (await firings("punctual")).length > 0 || undefined, "punctual to fire");
    const own = await p.apiOk<{ conversations: { key: string }[] }>("GET", `/v1/agents/${await p.agentId("punctual")}/conversations`);
    expect(own.conversations.map((c) => c.key)).toEqual(["trigger:schedule:* * * * * *"]);
  });

  it("agent show lists a schedule with its next run and last firing; ls is unchanged", async () => {
    const r = await p.cli(["agent", "show", "ticker", "--json"]);
    expect(r.code, r.stderr).toBe(0);
    const d = JSON.parse(r.stdout) as AgentDetail;
    expect(d.triggers).toHaveLength(1);
    const t = d.triggers[0]!;
    expect(t).toMatchObject({
      kind: "schedule",
      key: "schedule:* * * * * *",
      schedule: "* * * * * *",
      conversation: "ticks",
      catch_up: true,
    });
    expect(Date.parse(t.next_run!)).toBeGreaterThan(Date.parse(t.last_fired!));
    expect(t.last_message).toMatch(/^msg_/);
    const text = await p.cli(["agent", "show", "ticker"]);
    expect(text.stdout).toMatch(/trigger schedule "\* \* \* \* \* \*" -> ticks; next \S+, last fired \S+ \(msg_\w+\)/);

    const ls = await p.cli(["ls", "--json"]);
    const rows = JSON.parse(ls.stdout) as Record<string, unknown>[];
    for (const row of rows) expect(Object.keys(row).sort()).toEqual(["description", "id", "name", "org", "source", "status", "title"]);
  });

  it("a schedule missed while the daemon was down fires once at start, unless catch_up is false", async () => {
    // A late firing at the first start (see above) is not this one.
    const lateBefore = (await firings("ticker")).filter((f) => f.missed).length;
    const stop = await p.stop();
    expect(stop.forced).toBe(false);
    const stoppedAt = Date.now();
    // Three of the schedule's seconds come due while no daemon runs: the catch-up must fire once for all of them.
    const thirdMissed = Math.ceil(stoppedAt / 1000) * 1000 + 2000;
    await waitFor(() => Date.now() > thirdMissed, "three whole seconds to come due with the daemon stopped", 10_000);
    const startedAt = Date.now();
    await p.start();
    const late = await waitFor(async () => {
      const found = (await firings("ticker")).filter((f) => f.missed).slice(lateBefore);
      return found.length > 0 ? found : undefined;
    }, "the missed firing");
    // Once, for the latest time that came due while no daemon ran.
    expect(late).toHaveLength(1);
    expect(late[0]!.time).toBeGreaterThan(startedAt - 1000);
    const down = (f: { time: number }) => f.time > stoppedAt && f.time < startedAt;
    // Nothing else for the downtime (the catch-up's time may itself fall just before startedAt).
    expect((await firings("ticker")).filter((f) => down(f) && !f.missed)).toEqual([]);
    // punctual does not catch up: nothing for the downtime, and nothing fired late.
    await waitFor(async () => (await firings("punctual")).some((f) => f.time > startedAt) || undefined, "punctual to fire again");
    const punctual = await firings("punctual");
    expect(punctual.filter((f) => f.missed || down(f))).toEqual([]);
  });

  it("wakes an asleep agent when it comes due", async () => {
    const napper = await p.agentId("napper");
    const woke = await waitFor(
      async () => {
        const evs = await p.events(napper);
        const asleep = evs.findIndex((e) => short(e.type) === "agent.asleep");
        if (asleep < 0) return undefined;
        const awake = evs.findIndex((e, i) => i > asleep && short(e.type) === "agent.awake");
        if (awake < 0) return undefined;
        const queued = evs.find((e, i) => i > awake && short(e.type) === "message.queued");
        return queued ? { awake: evs[awake]!, queued } : undefined;
      },
      "napper to fall asleep and be woken by its schedule",
      30_000,
    );
    expect(woke.queued.data.text).toBe("wake up");
    expect(woke.queued.seq).toBeGreaterThan(woke.awake.seq);
  });
});

/**
 * Whole seconds, in order, none twice; a step of more than a second at most
 * once (a daemon stalled past a second on a busy machine fires the latest
 * time it missed, not each one).
 */
function expectEverySecond(times: number[]): void {
  const steps = times.slice(1).map((t, i) => t - times[i]!);
  for (const step of steps) expect(step % 1000, `steps ${steps.join(", ")}`).toBe(0);
  expect(steps.every((s) => s > 0)).toBe(true);
  expect(steps.filter((s) => s > 1000).length, `steps ${steps.join(", ")}`).toBeLessThanOrEqual(1);
}
