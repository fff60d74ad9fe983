/**
 * The agent's event stream costs little per event: what the work under way
 * commits before it waits on something (several commits of a turn) and a
 * whole backlog page leave in one write, which is one HTTP chunk on
 * the wire, and every follower gets the same bytes. Read over a raw socket so
 * the test sees the chunks the daemon wrote, not what a client library merged.
 */
import { connect, type Socket } from "node:net";
import { beforeAll, describe, expect, it } from "vitest";
import { createProject, short, type TestProject } from "../helpers/spawn-daemon.js";
import { TEST_DIALECT } from "../helpers/test-database.js";

let p: TestProject;
let helper: string;

beforeAll(async () => {
  p = await createProject();
  helper = await p.agentId("helper");
  await p.send(helper, "first");
}, 120_000);

interface Chunk {
  /** The SSE frames of the chunk, as text. */
  text: string;
  types: string[];
}

/** Follows the stream over a raw socket and hands each HTTP chunk (one daemon write) to `onChunk`. */
function follow(after: number, onChunk: (c: Chunk) => boolean | void): { done: Promise<void>; socket: Socket } {
  const socket = connect(p.port, "127.0.0.1");
  socket.write(
    `GET /v1/agents/${helper}/events/stream?after=${after} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${p.token}\r\nAccept: text/event-stream\r\n\r\n`,
  );
  let buf = Buffer.alloc(0);
  let body = false;
  const done = new Promise<void>((resolve, reject) => {
    socket.on("error", reject);
    socket.on("close", () => resolve());
    socket.on("data", (data: Buffer) => {
      buf = Buffer.concat([buf, data]);
      if (!body) {
        const end = buf.indexOf("\r\n\r\n");
        if (end < 0) return;
        const head = buf.subarray(0, end).toString();
        if (!/^HTTP\/1\.1 200/.test(head) || !/transfer-encoding: chunked/i.test(head)) reject(new Error(`unexpected head: ${head}`));
        buf = buf.subarray(end + 4);
        body = true;
      }
      for (;;) {
        const line = buf.indexOf("\r\n");
        if (line < 0) return;
        const size = parseInt(buf.subarray(0, line).toString(), 16);
        if (buf.length < line + 2 + size + 2) return;
        const text = buf.subarray(line + 2, line + 2 + size).toString();
        buf = buf.subarray(line + 2 + size + 2);
        const types = [...text.matchAll(/"type":"([^"]+)"/g)].map((m) => short(m[1]!));
        if (types.length > 0 && onChunk({ text, types }) === true) {
          socket.destroy();
          return;
        }
      }
    });
  });
  return { done, socket };
}

describe("the agent event stream", () => {
  it("sends a backlog in one chunk", async () => {
    const stored = await p.events(helper);
    expect(stored.length).toBeGreaterThan(8);
    const chunks: Chunk[] = [];
    // The whole backlog is the first chunk: stop after it.
    await follow(0, (c) => {
      chunks.push(c);
      return true;
    }).done;
    expect(chunks).toHaveLength(1);
    expect(chunks[0]!.types).toEqual(stored.map((e) => short(e.type)));
    // Still well-formed frames, one per event, with their seq as id.
    const ids = [...chunks[0]!.text.matchAll(/^id: (\d+)$/gm)].map((m) => Number(m[1]));
    expect(ids).toEqual(stored.map((e) => e.seq));
  });

  it("sends what one burst of work commits in one chunk, the same bytes to every follower", async () => {
    const last = (await p.events(helper)).at(-1)!.seq;
    const seen: Chunk[][] = [[], []];
    const followers = seen.map((chunks) => follow(last, (c) => (chunks.push(c), c.types.includes("turn.completed"))));
    // Both followers are subscribed once their (empty) backlog is read; a moment later is plenty.
    await new Promise((r) => setTimeout(r, 300));
    await p.apiOk("POST", `/v1/agents/${helper}/messages`, { text: "second" });
    await Promise.all(followers.map((f) => f.done));
    const [a, b] = seen as [Chunk[], Chunk[]];
    const all = a.flatMap((c) => c.types);
    expect(all[0]).toBe("message.queued");
    expect(all.at(-1)).toBe("turn.completed");
    // The message and the start of its turn commit together, and the turn's next steps follow at once (the model
    // answers without a wait): what they commit meanwhile joins the same chunk. On SQLite that includes the model's
    // reply, which went in a write of its own before; PostgreSQL's commit of it takes longer than the stream waits.
    const first = ["message.queued", "turn.started", "model.called", ...(TEST_DIALECT === "sqlite" ? ["model.replied"] : [])];
    expect(a[0]!.types.slice(0, first.length)).toEqual(first);
    expect(a.length).toBeLessThan(all.length);
    expect(b.map((c) => c.text).join("")).toBe(a.map((c) => c.text).join(""));
  });
});
