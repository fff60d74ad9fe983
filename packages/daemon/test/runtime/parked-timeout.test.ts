/**
 * A turn's timeout counts the time it runs, not the time it waits for a
 * person: a call approved long after the turn parked still runs, and the turn
 * ends normally (before, the approval found the deadline passed and the turn
 * failed with "took longer than its timeout").
 */
import { afterEach, describe, expect, it } from "vitest";
import { createHarness, FnToolset, type Harness } from "../helpers/runtime-harness.js";

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

function shop(log: string[]) {
  // It takes a moment, as a worker's call does: a turn past its deadline is stopped meanwhile.
  return new FnToolset("shop").add("refund", async (args) => {
    log.push(`refund ${JSON.stringify(args)}`);
    await new Promise((r) => setTimeout(r, 100));
    return { ok: true, output: { refunded: (args as { amount: number }).amount } };
  });
}
const script = { steps: [{ tool_calls: [{ tool: "shop/refund", args: { amount: 20 } }] }, { text: "refunded: {{result}}" }] };

describe("turn timeout and approvals", () => {
  it("a call approved after the turn's timeout has passed, while parked, still runs and the turn completes", async () => {
    const log: string[] = [];
    h = await createHarness({ toolsets: [shop(log)], policy: null });
    const a = await h.agent({ name: "a", script, timeout: 1 });
    await h.runtime.enqueue(a, "main", "refund");
    const asked = await h.waitFor((e) => e.type === "dev.wardrik.approval.requested");
    await h.waitFor((e) => e.type === "dev.wardrik.turn.parked");
    await new Promise((r) => setTimeout(r, 1500));
    await h.runtime.approve((await h.store.agents.get(a.id))!, String(asked.data.call));
    const end = await h.waitFor((e) => e.type === "dev.wardrik.turn.completed" || e.type === "dev.wardrik.turn.failed");
    expect(end.type).toBe("dev.wardrik.turn.completed");
    expect(end.data.reply).toContain("refunded");
    expect(log).toEqual(['refund {"amount":20}']);
    const turn = (await h.store.turns.get(String(end.run)))!;
    expect(turn.parked_ms).toBeGreaterThanOrEqual(1400);
    expect(turn.parked_since_ms).toBeNull();
  });

  it("time spent running still counts: a turn whose tool outlasts the timeout fails with the timeout", async () => {
    h = await createHarness({
      toolsets: [
        new FnToolset("slow").add("wait", () => new Promise((r) => setTimeout(() => r({ ok: true, output: "late" }), 2500)), {
          readOnly: true,
        }),
      ],
      policy: null,
    });
    const a = await h.agent({
      name: "b",
      script: { steps: [{ tool_calls: [{ tool: "slow/wait", args: {} }] }, { text: "done" }] },
      timeout: 1,
    });
    await h.runtime.enqueue(a, "main", "go");
    const end = await h.waitFor((e) => e.type === "dev.wardrik.turn.completed" || e.type === "dev.wardrik.turn.failed");
    expect(end.type).toBe("dev.wardrik.turn.failed");
    expect(String(end.data.reason)).toContain("timeout of 1 s");
  });
});
