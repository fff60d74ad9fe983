import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { agentStatus } from "../../src/store/rows.js";
import { afterEach, describe, expect, it } from "vitest";
import type { Policy } from "../../src/policy/types.js";
import { createHarness, FnToolset, type Harness } from "../helpers/runtime-harness.js";

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** What a wait here may take on a busy machine (PostgreSQL shared with other files): below the tests' own limit, so a miss names what it waited for. */
const WAIT_MS = 45_000;

describe("sleeping agents", { timeout: 60_000 }, () => {
  it("fall asleep after idle_timeout, hold no actor, and wake on a message", async () => {
    h = await createHarness({ sleepCheckMs: 20 });
    const a = await h.agent({ name: "a", idle_timeout: 0.1, script: { steps: [{ text: "hi {{message}}" }] } });
    await h.ask(a, "one");
    await h.waitFor((e) => e.type === "dev.wardrik.agent.asleep", WAIT_MS);
    expect(agentStatus((await h.store.agents.get(a.id))!)).toBe("asleep");
    expect(h.runtime.isAwake(a.id)).toBe(false);
    const end = await h.ask((await h.store.agents.get(a.id))!, "two");
    expect(end.data.reply).toBe("hi two");
    const types = h.events.map((e) => e.type.replace("dev.wardrik.", ""));
    expect(types.indexOf("agent.awake")).toBeGreaterThan(types.indexOf("agent.asleep"));
    expect(types.indexOf("agent.awake")).toBeLessThan(types.lastIndexOf("turn.started"));
  });

  it("once many agents have fallen asleep and it is quiet, collects garbage so the process gives memory back", async () => {
    const logged: { msg: string; fields: Record<string, unknown> | undefined }[] = [];
    h = await createHarness({
      sleepCheckMs: 20,
      memoryCollect: { afterSleeps: 3, quietMs: 200 },
      log: (_level, msg, fields) => void logged.push({ msg, fields }),
    });
    const agents = [];
    for (let i = 0; i < 3; i++) agents.push(await h.agent({ name: `s${i}`, idle_timeout: 0.1, script: { steps: [{ text: "ok" }] } }));
    for (const a of agents) await h.ask(a, "hi");
    const deadline = Date.now() + WAIT_MS;
    const collected = () => logged.find((l) => l.msg === "memory collected after agents fell asleep");
    while (!collected() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    expect(h.events.filter((e) => e.type === "dev.wardrik.agent.asleep")).toHaveLength(3);
    expect(collected()?.fields).toMatchObject({ heap_total_mb: [expect.any(Number), expect.any(Number)] });
    // Once per burst: quiet afterwards means no further collections.
    await new Promise((r) => setTimeout(r, 400));
    expect(logged.filter((l) => l.msg === "memory collected after agents fell asleep")).toHaveLength(1);
  });

  it("an agent awake when its daemon stopped is said to wake when the next daemon runs it; one never run is not", async () => {
    const dir = mkdtempSync(join(tmpdir(), "wardrik-awake-"));
    try {
      const script = { steps: [{ text: "hi {{message}}" }] };
      const first = await createHarness({ dir });
      const a = await first.agent({ name: "a", script });
      const fresh = await first.agent({ name: "fresh", script });
      await first.ask(a, "before");
      // A fresh agent's first turn is no waking: it never ran anywhere.
      await first.ask(fresh, "first");
      expect(first.events.filter((e) => e.type === "dev.wardrik.agent.awake")).toEqual([]);
      await first.close();

      h = await createHarness({ dir });
      h.script("a", script);
      const end = await h.ask((await h.store.agents.get(a.id))!, "after");
      expect(end.data.reply).toBe("hi after");
      const types = h.events.map((e) => e.type.replace("dev.wardrik.", ""));
      const awake = h.events.findIndex((e) => e.type === "dev.wardrik.agent.awake");
      expect(awake, types.join(", ")).toBeGreaterThanOrEqual(0);
      expect(awake).toBeLessThan(h.events.findIndex((e) => e.type === "dev.wardrik.turn.started"));
    } finally {
      await h?.close();
      h = undefined;
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("infinity keeps an agent awake", async () => {
    h = await createHarness({ sleepCheckMs: 20 });
    const a = await h.agent({ name: "a", idle_timeout: "infinity", script: { steps: [{ text: "ok" }] } });
    await h.ask(a, "one");
    await new Promise((r) => setTimeout(r, 150));
    expect(h.runtime.isAwake(a.id)).toBe(true);
    expect(h.events.some((e) => e.type === "dev.wardrik.agent.asleep")).toBe(false);
  });

  it("a parked agent can sleep, and an approval wakes it and finishes the turn", async () => {
    const ran: string[] = [];
    const t = new FnToolset("t").add("act", () => {
      ran.push("act");
      return { ok: true, output: "acted" };
    });
    const policy: Policy = { name: "p", rules: [] };
    h = await createHarness({ sleepCheckMs: 20, toolsets: [t], policy });
    const a = await h.agent({
      name: "a",
      idle_timeout: 0.1,
      script: { steps: [{ tool_calls: [{ tool: "t/act", args: {} }] }, { text: "{{result}}" }] },
    });
    await h.runtime.enqueue(a, "main", "go");
    const asked = await h.waitFor((e) => e.type === "dev.wardrik.approval.requested", WAIT_MS);
    await h.waitFor((e) => e.type === "dev.wardrik.agent.asleep", WAIT_MS);
    expect(h.runtime.isAwake(a.id)).toBe(false);
    expect(agentStatus((await h.store.agents.get(a.id))!)).toBe("parked");
    await h.runtime.approve((await h.store.agents.get(a.id))!, String(asked.data.call));
    await h.waitFor((e) => e.type === "dev.wardrik.agent.awake", WAIT_MS);
    const end = await h.waitFor((e) => e.type === "dev.wardrik.turn.completed", WAIT_MS);
    expect(end.data.reply).toBe("acted");
    expect(ran).toEqual(["act"]);
  });
});
