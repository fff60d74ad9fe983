/**
 * A files/write commits its effect in the same transaction as its result, so
 * a crash can never leave it "may have run". kill -9 lands at the moment the
 * write starts, again and again; after each restart every write is either on
 * the record with its file, or re-runs without asking anyone, and no call of
 * the files tool ever waits for a person. The same holds for files/delete:
 * a delete on the record as done has removed its file, one still open has not.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { createProject, type TestProject } from "../helpers/spawn-daemon.js";
import { projectDatabaseUrl } from "../helpers/database-contents.js";
import { withSideConnection } from "../helpers/side-connection.js";
import { asFaultDaemon } from "./fault-project.js";
import { eventsOf, followEvents, short, type FaultDaemon } from "./fault-api.js";

const ROUNDS = 8;
const DELETE_ROUNDS = 4;

/**
 * Straight from the database a crash left behind: every call of `tool` whose
 * effect (the file) and record (the call's state) disagree. A write leaves
 * its file, a delete removes it: a file that says the call ran while the call
 * is still open, or the other way round, would be a call in doubt.
 */
async function inDoubt(databaseUrl: string, tool: "files/write" | "files/delete"): Promise<string[]> {
  return withSideConnection(databaseUrl, async (db) => {
    const calls = await db.all<{ id: string; agent_id: string; args: string; status: string }>(
      "SELECT id, agent_id, args, status FROM calls WHERE tool = ?",
      [tool],
    );
    const doubts: string[] = [];
    for (const c of calls) {
      const path = (JSON.parse(c.args) as { path: string }).path;
      const file = (await db.all("SELECT 1 AS one FROM files WHERE agent_id = ? AND path = ?", [c.agent_id, path])).length > 0;
      const ran = tool === "files/write" ? file : !file;
      if (ran !== (c.status === "completed")) doubts.push(`${c.id} is ${c.status} but its file ${file ? "exists" : "does not"}`);
    }
    return doubts;
  });
}

/** One project and daemon for the file: the writer's crashes, then the tidier's. */
let p: TestProject;
let d: FaultDaemon;
beforeAll(async () => {
  p = await createProject({
    scripts: {
      writer: [
        "steps:",
        '  - tool_calls: [{ tool: "files/write", args: { path: "notes/{{message}}.txt", content: "body of {{message}}" } }]',
        '  - tool_calls: [{ tool: "files/read", args: { path: "notes/{{message}}.txt" } }]',
        '  - text: "read {{result}}"',
        "",
      ].join("\n"),
      tidier: [
        "steps:",
        '  - tool_calls: [{ tool: "files/write", args: { path: "tmp/{{message}}.txt", content: "scratch {{message}}" } }]',
        '  - tool_calls: [{ tool: "files/delete", args: { path: "tmp/{{message}}.txt" } }]',
        '  - text: "tidied {{result}}"',
        "",
      ].join("\n"),
    },
    files: {
      "agents/writer.md": "---\ndescription: Writes notes.\nmodel: writer\ntools: [files]\npolicy: notes\n---\nWrite.\n",
      "agents/tidier.md": "---\ndescription: Writes and deletes scratch files.\nmodel: tidier\ntools: [files]\npolicy: notes\n---\nTidy.\n",
      "policies/notes.yaml": "description: Files only.\nrules:\n  - tool: files/*\n    decision: allow\n",
    },
  });
  d = asFaultDaemon(p);
});

describe("files tool across kill -9", () => {
  it("never leaves a write in doubt", async () => {
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
      expect(await inDoubt(projectDatabaseUrl(p.dir, p.read("config.yaml")), "files/write"), `after crash ${i}`).toEqual([]);
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

  it("never leaves a delete in doubt", async () => {
    const agent = await p.agentId("tidier");
    const databaseUrl = projectDatabaseUrl(p.dir, p.read("config.yaml"));
    const messages: string[] = [];
    for (let i = 0; i < DELETE_ROUNDS; i++) {
      const after = (await eventsOf(d, agent)).at(-1)?.seq ?? 0;
      let killed = false;
      const follow = followEvents(d, agent, after, (e) => {
        if (short(e.type) === "call.started" && (e.data as { tool?: string }).tool === "files/delete" && !killed) {
          killed = true;
          p.child?.kill("SIGKILL");
          return true;
        }
        return false;
      });
      messages.push((await p.apiOk<{ message: string }>("POST", `/v1/agents/${agent}/messages`, { text: `d${i}` })).message);
      await follow.done;
      await d.waitForExit();
      expect(await inDoubt(databaseUrl, "files/delete"), `after crash ${i}`).toEqual([]);
      await p.start();
    }
    const events = await eventsOf(d, agent);
    for (const [i, message] of messages.entries()) {
      const started = events.find((e) => short(e.type) === "turn.started" && (e.data as { messages: string[] }).messages.includes(message));
      expect(started, `turn of d${i}`).toBeDefined();
      const end = await p.waitForTurnEnd(agent, started!.run!, 30_000);
      expect(end.type).toBe("dev.wardrik.turn.completed");
    }
    const all = await eventsOf(d, agent);
    expect(all.filter((e) => short(e.type) === "approval.requested")).toEqual([]);
    // Each delete completed exactly once on the record, and took its file with it.
    const deletes = all.filter((e) => short(e.type) === "call.completed" && (e.data as { tool: string }).tool === "files/delete");
    expect(new Set(deletes.map((e) => (e.data as { call: string }).call)).size).toBe(deletes.length);
    expect(deletes).toHaveLength(DELETE_ROUNDS);
    for (const e of deletes) expect((e.data as { output: { deleted: unknown } }).output.deleted).toBeTruthy();
    expect(await inDoubt(databaseUrl, "files/delete")).toEqual([]);
    expect(await withSideConnection(databaseUrl, (db) => db.all("SELECT path FROM files WHERE agent_id = ?", [agent]))).toEqual([]);
  }, 240_000);
});
