/**
 * PostgreSQL only. A transaction that loses a race (40001, 40P01) runs again
 * from the start; whatever the first attempt marked in memory must not
 * outlive it. Here the server itself fails the first attempt: a trigger
 * raises a real serialization failure on the first insert into `inputs`.
 */
import { afterEach, describe, expect, it } from "vitest";
import { createHarness, type Harness } from "../helpers/runtime-harness.js";
import { sideConnection, type SideConnection } from "../helpers/side-connection.js";

let h: Harness | undefined;
let side: SideConnection | undefined;
afterEach(async () => {
  await side?.close();
  await h?.close();
  h = side = undefined;
});

/** The next `count` inserts into `inputs` fail as a lost race would; a sequence, since it survives the rollback. */
async function failInputInserts(s: SideConnection, count: number): Promise<void> {
  await s.run("CREATE SEQUENCE lost_races");
  await s.run(
    `CREATE FUNCTION lose_race() RETURNS trigger LANGUAGE plpgsql AS $$
     BEGIN
       IF nextval('lost_races') <= ${count} THEN
         RAISE EXCEPTION 'could not serialize access (test)' USING ERRCODE = '40001';
       END IF;
       RETURN NEW;
     END $$`,
  );
  await s.run("CREATE TRIGGER lose_race BEFORE INSERT ON inputs FOR EACH ROW EXECUTE FUNCTION lose_race()");
}

describe("a transaction run again after a lost race", () => {
  it("a message whose commit was retried still starts its turn, and the conversation takes the next one", async () => {
    h = await createHarness();
    const a = await h.agent({ name: "a", script: { steps: [{ text: "done" }] } });
    // The conversation exists and its runner knows it: the retried commit starts the turn itself.
    expect((await h.ask(a, "first")).data.reply).toBe("done");
    side = await sideConnection(h.databaseUrl);
    await failInputInserts(side, 2);

    const q = await h.runtime.enqueue(a, "main", "second");
    const [lost] = await side.all<{ n: string }>("SELECT last_value AS n FROM lost_races");
    expect(Number(lost?.n)).toBe(3); // two lost races, then the attempt that committed
    const ended = await h.waitFor(
      (e) =>
        e.type === "dev.wardrik.turn.completed" &&
        h!.events.some(
          (s) => s.type === "dev.wardrik.turn.started" && s.run === e.run && (s.data.messages as string[]).includes(q.message),
        ),
      10_000,
    );
    expect(ended.data.reply).toBe("done");
    // Nothing of the lost attempts holds the conversation: the next message gets its turn too.
    expect((await h.ask(a, "third")).data.reply).toBe("done");
  });
});
