import { copyFileSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { LOST_ANSWER } from "../../src/runtime/types.js";
import { FIXTURE_SCRIPT } from "../fixtures/state-v1-script.js";
import { createHarness, FnToolset, type Harness } from "../helpers/runtime-harness.js";
import { withSideConnection } from "../helpers/side-connection.js";

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const fixtures = join(dirname(fileURLToPath(import.meta.url)), "..", "fixtures");

describe("the stored format", () => {
  it("resumes the unfinished turn of a database written by state format 1 (checked in)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "wardrik-v1-"));
    copyFileSync(join(fixtures, "state-v1.db"), join(dir, "wardrik.db"));
    const ran: string[] = [];
    const ops = new FnToolset("ops")
      .add(
        "lookup",
        (_a, ctx) => {
          ran.push(`lookup ${ctx.idempotencyKey}`);
          return { ok: true, output: { order: 7, total: 42 } };
        },
        { readOnly: true },
      )
      .add("charge", () => {
        ran.push("charge");
        return { ok: true, output: { charged: 42 } };
      });
    h = await createHarness({ dir, toolsets: [ops] });
    h.script("keeper", FIXTURE_SCRIPT);
    const agent = (await h.store.agents.byName("default", "keeper"))!;
    expect(agent.id).toMatch(/^agt_/);
    // The fixture was written days ago, and a turn's timeout counts from its start: dated now, its turns are
    // still within their timeout, so what is checked is the format, not the clock (a step that waits its
    // org's turn of the event loop would otherwise meet the long-passed deadline).
    const now = new Date().toISOString();
    await withSideConnection(h.databaseUrl, (db) => db.run("UPDATE turns SET started_at = ?", [now]));
    await h.runtime.recover();
    // The safe lookup re-ran with its saved key; the charge may have run, so it waits for a person.
    const asked = await h.waitFor((e) => e.type === "dev.wardrik.approval.requested");
    expect(asked.data).toMatchObject({ tool: "ops/charge", reason: LOST_ANSWER });
    const calls = await h.store.calls.ofTurn(String(asked.run));
    const lookup = calls.find((c) => c.tool === "ops/lookup")!;
    expect(ran).toEqual([`lookup ${lookup.idempotency_key}`]);
    // The message queued before the crash got its own turn.
    const later = await h.waitFor((e) => e.type === "dev.wardrik.turn.completed" && e.data.reply === "answered: queued before the crash");
    expect(later.run).not.toBe(asked.run);
    await h.runtime.approve(agent, String(asked.data.call));
    const end = await h.waitFor((e) => e.type === "dev.wardrik.turn.completed" && e.run === asked.run);
    expect(end.data.reply).toBe('charged: {"charged":42}');
    expect(ran.filter((r) => r === "charge")).toHaveLength(1);
  });
});
