/**
 * PostgreSQL only. A stream of one agent's events hears of another node's
 * events by that node's notice, which can be lost (the node died between its
 * commit and its notice). The stream must then find them by itself, as the
 * org-wide feed does with its poll: here an event is written straight into
 * the database, as a node that told nobody would leave it.
 */
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createProject, readSse, type TestProject, type WireEvent } from "../helpers/spawn-daemon.js";

let p: TestProject;
let agent: string;
let db: pg.Client;

beforeAll(async () => {
  p = await createProject({
    files: { "agents/watched.md": "---\ndescription: Never asked anything here.\nmodel: scripted\n---\nWait.\n" },
  });
  agent = await p.agentId("watched");
  db = new pg.Client({ connectionString: /^database:\s*(\S+)/m.exec(p.read("config.yaml"))![1] });
  await db.connect();
}, 120_000);

afterAll(async () => {
  await db?.end();
});

describe("an agent's event stream on PostgreSQL", () => {
  it("shows an event another node wrote without telling anyone, with no later event to bring it", async () => {
    const last = (await p.events(agent)).at(-1)?.seq ?? 0;
    const res = await fetch(`${p.url}/v1/agents/${agent}/events/stream?after=${last}`, {
      headers: { authorization: `Bearer ${p.token}` },
    });
    expect(res.status).toBe(200);
    let got: WireEvent | undefined;
    const reading = readSse(res, (f) => {
      if (f.event !== "event") return false;
      got = JSON.parse(f.data) as WireEvent;
      return true;
    });
    await new Promise((r) => setTimeout(r, 200));
    await db.query(
      "INSERT INTO events (agent_id, seq, id, org, type, time, subject, run, data) VALUES ($1, $2, $3, $4, $5, $6, NULL, NULL, $7)",
      [agent, last + 1, "ev_from_elsewhere", "default", "dev.wardrik.agent.note", new Date().toISOString(), '{"from":"another node"}'],
    );
    // Well before the 15 s keep-alive; without its own look the stream never reads it at all.
    const timeout = new Promise<"timed out">((r) => setTimeout(() => r("timed out"), 5000).unref());
    expect(await Promise.race([reading.then(() => "read" as const), timeout])).toBe("read");
    expect(got).toMatchObject({ id: "ev_from_elsewhere", seq: last + 1, data: { from: "another node" } });
  });
});
