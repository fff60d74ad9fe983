/** `wardrik events NAME`: text lines, --json CloudEvents, --after, --follow. */
import { beforeAll, describe, expect, it } from "vitest";
import { createProject, short, ULID, type TestProject, type WireEvent } from "../helpers/spawn-daemon.js";

let p: TestProject;
let id: string;
let run: string;

const TURN_TYPES = /^(turn|model|round|call|approval|budget)\./;

beforeAll(async () => {
  p = await createProject();
  id = await p.agentId("helper");
  run = (await p.send(id, "record this")).run;
});

// These only read the record that beforeAll made, so they run at once.
describe.concurrent("wardrik events", () => {
  it("prints one line per event: sequence, time, type, run, gist", async () => {
    const r = await p.cli(["events", "helper"]);
    expect(r.code, r.stderr).toBe(0);
    const lines = r.stdout.trim().split("\n");
    const parsed = lines.map((l) => /^\s*(\d+) (\S+) (\S+)\s+(\S+) ?(.*)$/.exec(l));
    expect(
      parsed.every((m) => m !== null),
      r.stdout,
    ).toBe(true);
    expect(parsed.map((m) => Number(m![1]))).toEqual(lines.map((_, i) => i + 1));
    const types = parsed.map((m) => m![3]);
    expect(types[0]).toBe("agent.loaded");
    expect(types).toEqual(
      expect.arrayContaining([
        "message.queued",
        "turn.started",
        "model.called",
        "model.replied",
        "round.saved",
        "call.started",
        "call.completed",
        "turn.completed",
      ]),
    );
    for (const m of parsed) {
      expect(Number.isNaN(Date.parse(m![2]!))).toBe(false);
      expect(m![4]).toBe(TURN_TYPES.test(m![3]!) ? run : "-");
    }
    expect(r.stdout).toMatch(/message\.queued\s+- msg_[0-9A-Z]{26} record this/);
    expect(r.stdout).toMatch(/turn\.completed\s+run_\S+ I saved your question/);
  });

  it("--json prints CloudEvents 1.0, one per line, with seq increasing by 1 and the run on turn events", async () => {
    const r = await p.cli(["events", "helper", "--json"]);
    expect(r.code, r.stderr).toBe(0);
    const events = r.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as WireEvent);
    expect(events.length).toBeGreaterThanOrEqual(15);
    const ids = new Set<string>();
    let prevTime = 0;
    events.forEach((e, i) => {
      expect(e.specversion).toBe("1.0");
      expect(e.id).toMatch(/^evt_/);
      expect(ULID.test(e.id.slice(4)), e.id).toBe(true);
      ids.add(e.id);
      expect(e.type).toMatch(/^dev\.wardrik\.[a-z_]+\.[a-z_]+$/);
      expect(e.source).toBe(`/orgs/default/agents/${id}`);
      expect(e.time).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/);
      const t = Date.parse(e.time);
      expect(t).toBeGreaterThanOrEqual(prevTime);
      prevTime = t;
      expect(e.seq).toBe(i + 1);
      expect(typeof e.data).toBe("object");
      if (TURN_TYPES.test(short(e.type))) expect(e.run, e.type).toBe(run);
      else expect(e.run, e.type).toBeUndefined();
    });
    expect(ids.size).toBe(events.length);
    // Call events name their call as the subject.
    for (const e of events.filter((x) => /\.call\.(started|completed)$/.test(x.type))) {
      expect(e.subject).toMatch(/^call_/);
      expect(e.subject).toBe(e.data.call);
    }
    const replied = events.filter((e) => short(e.type) === "model.replied");
    expect(replied).toHaveLength(3);
    for (const e of replied) {
      expect(e.data.input_tokens).toEqual(expect.any(Number));
      expect(e.data.output_tokens).toEqual(expect.any(Number));
      expect(e.data.cost_usd).toEqual(expect.any(Number));
    }
    // The same events through the API.
    const api = await p.events(id);
    expect(api.slice(0, events.length)).toEqual(events);
  });

  it("--after SEQ prints only later events", async () => {
    const r = await p.cli(["events", "helper", "--json", "--after", "5"]);
    expect(r.code, r.stderr).toBe(0);
    const seqs = r.stdout
      .trim()
      .split("\n")
      .map((l) => (JSON.parse(l) as WireEvent).seq);
    expect(seqs[0]).toBe(6);
    expect(seqs).toEqual(seqs.map((_, i) => i + 6));
  });
});

// After the readers above: this one adds a turn to the record.
describe("wardrik events --follow", () => {
  it("--follow prints the existing events, then new ones as they happen", async () => {
    const before = (await p.events(id)).length;
    const follower = p.spawnCli(["events", "helper", "--follow", "--json"]);
    try {
      await follower.waitForOutput(() => follower.lines().length >= before);
      await p.send(id, "followed live");
      await follower.waitForOutput(() => follower.lines().some((l) => l.includes("turn.completed") && l.includes("followed live")));
      const events = follower.lines().map((l) => JSON.parse(l) as WireEvent);
      expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
      const live = events.slice(before);
      expect(short(live[0]!.type)).toBe("message.queued");
      expect(live[0]!.data.text).toBe("followed live");
      expect(live.map((e) => short(e.type))).toEqual(expect.arrayContaining(["turn.started", "call.completed", "turn.completed"]));
      // Still following: not ended by the turn's end.
      expect(follower.child.exitCode).toBeNull();
    } finally {
      await follower.stop("SIGINT");
    }
  });

  it("--follow goes on through a daemon killed and started again: every event once, in order", async () => {
    const before = (await p.events(id)).length;
    const follower = p.spawnCli(["events", "helper", "--follow", "--json"]);
    try {
      await follower.waitForOutput(() => follower.lines().length >= before);
      // The stream is cut mid-answer (SIGKILL): the follower asks again from the last event it printed.
      await p.kill();
      await p.start();
      await p.send(id, "after the restart");
      await follower.waitForOutput(() => follower.lines().some((l) => l.includes("turn.completed") && l.includes("after the restart")));
      const events = follower.lines().map((l) => JSON.parse(l) as WireEvent);
      expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
      expect(follower.child.exitCode).toBeNull();
    } finally {
      await follower.stop("SIGINT");
    }
  });
});
