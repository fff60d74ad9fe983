/**
 * Claiming queued messages (SQLite and PostgreSQL): a turn takes every queued
 * message up to the first one an agents/NAME call sent; that one is taken
 * alone, by the turn its call named (childRunOf), and nothing after it is
 * taken with it.
 */
import { afterEach, describe, expect, it } from "vitest";
import { childRunOf } from "../../src/ids.js";
import type { Db } from "../../src/store/db.js";
import { InputsTable } from "../../src/store/inputs.js";
import { openTestDb } from "../helpers/test-database.js";

const opened: Db[] = [];
afterEach(async () => {
  for (const db of opened.splice(0)) await db.close();
});

const CALL_1 = "call_01JC0000000000000000000001";
const CALL_2 = "call_01JC0000000000000000000002";

describe("claiming queued messages", () => {
  it("regular messages are taken together; each call's message alone, by the turn its call named", async () => {
    const { db } = await openTestDb();
    opened.push(db);
    const inputs = new InputsTable(db);
    const now = new Date().toISOString();
    const queue = async (id: string, parentCall?: string) =>
      db.transaction((tx) => inputs.insert(tx, { id, agentId: "agt_a", conversationId: "cnv_1", text: id, parentCall }, now));
    await queue("msg_1");
    await queue("msg_2");
    await queue("msg_3", CALL_1);
    await queue("msg_4", CALL_2);
    await queue("msg_5");
    const claim = (run: string) => db.transaction((tx) => inputs.claim(tx, "cnv_1", run));
    const first = await claim("run_A");
    expect(first).toMatchObject({ run: "run_A", more: true });
    expect(first.inputs.map((i) => i.id)).toEqual(["msg_1", "msg_2"]);
    const second = await claim("run_B");
    expect(second.run).toBe(childRunOf(CALL_1));
    expect(second.inputs).toEqual([{ id: "msg_3", text: "msg_3", parentCall: CALL_1 }]);
    expect((await claim("run_C")).run).toBe(childRunOf(CALL_2));
    expect(await claim("run_D")).toEqual({ run: "run_D", inputs: [{ id: "msg_5", text: "msg_5" }], more: false });
    expect((await claim("run_E")).inputs).toEqual([]);
    expect(await inputs.parentCallOf(childRunOf(CALL_2))).toBe(CALL_2);
    expect(childRunOf(CALL_1)).toBe("run_01JC0000000000000000000001");
  });
});
