/**
 * A files/write commits its effect in the same transaction as its result, so
 * a crash can never leave it "may have run". kill -9 lands at the moment the
 * write starts, again and again; after each restart every write is either on
 * the record with its file, or re-runs without asking anyone, and no call of
 * the files tool ever waits for a person.
 */
import { describe, expect, it } from "vitest";
import { createProject } from "../helpers/spawn-daemon.js";
import { projectDatabaseUrl } from "../helpers/database-contents.js";
import { withSideConnection } from "../helpers/side-connection.js";
import { asFaultDaemon } from "./fault-project.js";
import { eventsOf, followEvents, short } from "./fault-kit.js";

const ROUNDS = 8;

/**
 * Straight from the database a crash left behind: every files/write whose
 * effect (the file) and record (the call's state) disagree. A written file
 * with its call still open, or a completed call without its file, would be a
 * write in doubt.
 */
async function inDoubt(databaseUrl: string): Promise<string[]> {
  return withSideConnection(databaseUrl, async (db) => {
    const calls = await db.all<{ id: string; agent_id: string; args: string; status: string }>(
      "SELECT id, agent_id, args, status FROM calls WHERE tool = 'files/write'",
    );
    const doubts: string[] = [];
    for (const c of calls) {
      const path = (JSON.parse(c.args) as { path: string }).path;
      const file = (await db.all("SELECT 1 AS one FROM files WHERE agent_id = ? AND path = ?", [c.agent_id, path])).length > 0;
      if (file !== (c.status === "completed")) doubts.push(`${c.id} is ${c.status} but its file ${file ? "exists" : "does not"}`);
    }
    return doubts;
  });
}

describe("files tool across kill -9", () => {
  it("never leaves a write in doubt", async () => {
    const p = await createProject({
      scripts: {
        writer: [
          "steps:",
          '  - tool_calls: [{ tool: "files/write", args: { path: "notes/{{message}}.txt", content: "body of {{message}}" } }]',
          '  - tool_calls: [{ tool: "files/read", args: { path: "notes/{{message}}.txt" } }]',
          '  - text: "read {{result}}"',
          "",
        ].join("\n"),
      },
      files: {
        "agents/writer.md": "---\ndescription: Writes notes.\nmodel: writer\ntools: [files]\npolicy: notes\n---\nWrite.\n",
        "policies/notes.yaml": "description: Files only.\nrules:\n  - tool: files/*\n    decision: allow\n",
      },
    });
    const d = asFaultDaemon(p);
    const agent = await p.agentId("writer");
    const messages: string[] = [];
    for (let i = 0; i < ROUNDS; i++) {
      const after = (await eventsOf(d, agent)).at(-1)?.seq ?? 0;
      let killed = false;
      const follow = followEvents(d, agent, after, (e) => {
        if (short(e.type) === "call.started" && (e.data as { tool?: string }).tool === "files/write" && !killed) {
          killed = true;
          p.child?.kill("SIGKILL");
          return true;
        }
        return false;
      });
      const text = `m${i}`;
      messages.push((await p.apiOk<{ message: string }>("POST", `/v1/agents/${agent}/messages`, { text })).message);
      await follow.done;
      await d.waitForExit();
      expect(await inDoubt(projectDatabaseUrl(p.dir, p.read("config.yaml"))), `after crash ${i}`).toEqual([]);
      await p.start();
    }
    const events = await eventsOf(d, agent);
    for (const [i, message] of messages.entries()) {
      const started = events.find((e) => short(e.type) === "turn.started" && (e.data as { messages: string[] }).messages.includes(message));
      expect(started, `turn of m${i}`).toBeDefined();
      const end = await p.waitForTurnEnd(agent, started!.run!, 30_000);
      expect(end.type).toBe("dev.wardrik.turn.completed");
      expect((end.data as { reply: string }).reply).toContain(`body of m${i}`);
    }
    const all = await eventsOf(d, agent);
    expect(all.filter((e) => short(e.type) === "approval.requested")).toEqual([]);
    // Each write call completed exactly once on the record.
    const writes = all.filter((e) => short(e.type) === "call.completed" && (e.data as { tool: string }).tool === "files/write");
    expect(new Set(writes.map((e) => (e.data as { call: string }).call)).size).toBe(writes.length);
    expect(writes).toHaveLength(ROUNDS);
  }, 240_000);
});
