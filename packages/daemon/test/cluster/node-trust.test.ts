/**
 * What the nodes of a cluster trust: not the database. Two daemons on one
 * PostgreSQL database, the worker connected to the node that does not own
 * the agent, so its calls cross nodes. The database is one an earlier
 * release wrote (schema version 12, its cluster secret stored in plaintext):
 * the nodes upgrade it, drop that secret, and still call one another, with
 * the key they derive from the secrets key. Whoever has a copy of the database
 * (every row of every table) but not the secrets key cannot make a node run
 * a worker tool; a request signed with the key still runs only a call its
 * owner decided and recorded, and only while it runs. The question whether a
 * node's workers know a lost call is held to the same signature.
 */
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import pg from "pg";
import { beforeAll, describe, expect, it } from "vitest";
import { migratePostgres, readMigrations } from "../../src/store/migrate.js";
import type { TestProject } from "../helpers/spawn-daemon.js";
import { signRequest } from "../../src/cluster/node-key.js";
import { readKeyFile } from "../../src/secrets/key-ring.js";
import { databaseContents } from "../helpers/database-contents.js";
import { createTestDatabase } from "../helpers/test-database.js";
import { eventsOf, send, short, waitUntil, type FaultEvent } from "../faults/fault-api.js";
import type { FaultWorker } from "../faults/fault-worker-process.js";
import { openClusterDb, startCluster, waitForClusterWorker, type Cluster } from "./cluster-kit.js";

let c: Cluster;
let w: FaultWorker;
let workerNode: string;

/** The secret release 12 kept in cluster_secrets, which was all a node needed to run another's tools. */
const OLD_SECRET = randomBytes(32).toString("base64url");

function databaseOf(p: TestProject): string {
  return /^database:\s*(\S+)/m.exec(p.read("config.yaml"))![1]!;
}

/**
 * The project's database as release 12 left it: migrations 1 to 12, and its
 * cluster secret. On an empty database of its own (the harness gives a
 * project one with every migration applied).
 */
async function databaseOfRelease12(p: TestProject): Promise<void> {
  const { url } = await createTestDatabase();
  p.write("config.yaml", p.read("config.yaml").replace(/^database:.*$/m, `database: ${url}`));
  const client = new pg.Client({ connectionString: databaseOf(p) });
  await client.connect();
  try {
    const { version } = await migratePostgres(
      client,
      readMigrations("postgres").filter((m) => m.version <= 12),
    );
    expect(version).toBe(12);
    await client.query("INSERT INTO cluster_secrets (id, secret) VALUES (1, $1)", [OLD_SECRET]);
  } finally {
    await client.end();
  }
}

beforeAll(async () => {
  c = await startCluster({
    count: 2,
    byPrefix: { m: { toolMs: { lookup: 20, upsert: 20, charge: 20 } }, h: { toolMs: { lookup: 20 }, hold: ["lookup"] } },
    beforeNodes: databaseOfRelease12,
  });
  // Sent to n1, the agent is n1's; its worker is n2's.
  w = c.worker(c.nodes[1]!.url);
  await waitForClusterWorker(c, c.nodes[1]!, w);
  workerNode = c.nodes[1]!.url;
});

/** A call for the worker on n2 as another node would send it, for call `callId` of turn `run`. */
function forged(callId: string, run = "run-x") {
  return {
    org: "default",
    tool: "charge",
    args: { tag: `forged-${callId}`, ms: 0 },
    decision: "allow",
    ctx: { agent: c.agentId, run, callId, idempotencyKey: callId, attempt: 1, timeoutMs: 5000 },
  };
}

/** Posts `body` to n2's cluster route `path`; `header` gives what proves the sender, from the exact text sent. */
async function post(
  body: unknown,
  header: (text: string) => string | undefined,
  text = JSON.stringify(body),
  path = "/v1/cluster/calls",
): Promise<{ status: number; text: string }> {
  const h = header(text);
  const res = await fetch(`${workerNode}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...(h === undefined ? {} : { "wardrik-cluster": h }) },
    body: text,
  });
  return { status: res.status, text: await res.text() };
}

describe("the cluster trusts no plaintext in the database", () => {
  it("on the upgraded database, a call that crosses nodes runs once and is on the agent's record, with its decision", async () => {
    const m = (await fetch(`${c.nodes[0]!.url}/v1/agents/${c.agentId}/messages`, {
      method: "POST",
      headers: { authorization: `Bearer ${c.p.token}`, "content-type": "application/json" },
      body: JSON.stringify({ text: "m-cross", conversation: "main" }),
    }).then((r) => r.json())) as { message: string };
    const events = await waitUntil(
      async () => {
        const evs = await eventsOf(c.nodes[0]!, c.agentId);
        const run = evs.find((e) => short(e.type) === "turn.started" && (e.data.messages as string[]).includes(m.message))?.run;
        return evs.some((e) => e.run === run && short(e.type) === "turn.completed") ? evs.filter((e) => e.run === run) : undefined;
      },
      "the turn to complete",
      30_000,
      50,
    );
    expect(await c.ownerOf(c.agentId)).toBe("n1");
    for (const tool of ["lookup", "upsert", "charge"]) {
      const ran = w.log().filter((l) => l.tag === `m-cross/${tool}` && l.phase === "start");
      expect(ran, tool).toHaveLength(1);
      const of = (type: string) => events.find((e: FaultEvent) => short(e.type) === type && e.data.tool === `workers/${tool}`);
      expect(of("call.decided")?.data.decision).toBe("allow");
      expect(of("call.started")).toBeDefined();
      expect(of("call.completed")?.data.call).toBe(of("call.started")?.data.call);
    }
  });

  it("no value in a copy of the database makes a node run a tool, nor the secret an earlier release kept there", async () => {
    const copy = await databaseContents(databaseOf(c.p));
    expect(copy.find((t) => t.where === "table schema_migrations")?.text).toContain("no_cluster_secret");
    expect(copy.map((t) => t.where)).not.toContain("table cluster_secrets");
    expect(copy.some((t) => t.text.includes(OLD_SECRET))).toBe(false);
    expect((await post(forged("old"), () => OLD_SECRET)).status).toBe(401);
    const candidates = new Set<string>();
    for (const table of copy)
      for (const line of table.text.split("\n").filter((l) => l !== ""))
        for (const v of Object.values(JSON.parse(line) as Record<string, unknown>))
          if (typeof v === "string" && /^[\w+/=.:-]{16,}$/.test(v)) candidates.add(v);
    expect(candidates.size).toBeGreaterThan(10);
    for (const value of candidates) {
      const r = await post(forged("copy"), () => value);
      expect(r.status, `${value} opened the door: ${r.text}`).toBe(401);
    }
    expect((await post(forged("none"), () => undefined)).status).toBe(401);
    expect(w.log().filter((l) => l.tag.startsWith("forged-"))).toEqual([]);
  });

  it("with the key, a node still runs only a call its owner recorded as running: not an invented one, not a finished one", async () => {
    // The key is in .wardrik/secret-key, outside the database; only a node (or its operator) has it.
    const keys = readKeyFile(join(c.p.dir, ".wardrik", "secret-key"));
    const ring = { current: keys[0]!, readable: keys, source: "test" };
    const sign = (text: string) => signRequest(ring, "POST", "/v1/cluster/calls", text);

    let header = "";
    const invented = await post(forged("invented"), (text) => (header = sign(text)));
    expect(invented.status).toBe(403);
    expect(JSON.parse(invented.text)).toMatchObject({
      detail: expect.stringMatching(/^No call workers\/charge invented of agent agt_\w+ is running on the record\.$/),
    });

    // The same signature again: a replay.
    const replayed = JSON.stringify(forged("invented"));
    expect((await post(undefined, () => header, replayed)).status).toBe(401);

    // The charge of the turn above, sent again: it is recorded, but finished.
    const evs = await eventsOf(c.nodes[0]!, c.agentId);
    const done = evs.find((e) => short(e.type) === "call.completed" && e.data.tool === "workers/charge")!;
    expect((await post(forged(String(done.data.call), done.run), sign)).status).toBe(403);

    // A signature is good for the body it was made for, and for five minutes.
    const body = JSON.stringify(forged("tampered"));
    expect((await post(undefined, () => sign(body), body.replace("forged-tampered", "forged-changed"))).status).toBe(401);
    const stale = await post(forged("stale"), (text) => signRequest(ring, "POST", "/v1/cluster/calls", text, Date.now() - 10 * 60_000));
    expect(stale.status).toBe(401);
    // Signed, but nested past limits.json_depth: refused like any other request's body, before it is parsed.
    const deep = `{"org":"default","tool":"charge","args":{"a":${"[".repeat(100_000)}${"]".repeat(100_000)}}}`;
    const tooDeep = await post(undefined, () => sign(deep), deep);
    expect(tooDeep.status).toBe(400);
    expect(JSON.parse(tooDeep.text)).toMatchObject({ code: "json_too_deep" });
    expect(w.log().filter((l) => l.tag.startsWith("forged-"))).toEqual([]);
  });

  it("asks its workers whether they know a call only for another node: an unsigned or replayed question learns nothing", async () => {
    const keys = readKeyFile(join(c.p.dir, ".wardrik", "secret-key"));
    const ring = { current: keys[0]!, readable: keys, source: "test" };
    const RECALL = "/v1/cluster/calls/recall";
    const sign = (text: string) => signRequest(ring, "POST", RECALL, text);
    const ask = (body: unknown, header: (text: string) => string | undefined, text?: string) => post(body, header, text, RECALL);

    // The charge of the first turn: n2's worker ran it and remembers its key.
    const evs = await eventsOf(c.nodes[0]!, c.agentId);
    const started = evs.find((e) => short(e.type) === "call.started" && e.data.tool === "workers/charge")!;
    const callId = String(started.data.call);
    const key = String(started.data.idempotency_key);
    const question = (idempotencyKey = key, id = callId) => ({
      org: "default",
      question: { callId: id, idempotencyKey, attempt: 1, runningMs: 1000 },
    });
    const saysNothing = (r: { status: number; text: string }) => {
      expect(r.status).toBe(401);
      expect(r.text).not.toContain(key);
      // A problem document's `instance` is the request's own path; anything else about a worker instance would be news.
      expect(r.text.replace(`"instance":"${RECALL}"`, "")).not.toMatch(/"known"|m-cross|instance/);
    };

    saysNothing(await ask(question(), () => undefined));
    saysNothing(await ask(question(), () => OLD_SECRET));
    saysNothing(await ask(question(), (text) => signRequest(ring, "POST", "/v1/cluster/calls", text)));

    // Signed by a node: the worker that ran the call answers with its outcome.
    let header = "";
    const text = JSON.stringify(question());
    const known = await ask(undefined, () => (header = sign(text)), text);
    expect(known.status, known.text).toBe(200);
    expect(JSON.parse(known.text)).toMatchObject({ known: true, attempt: 1, outcome: { ok: true } });
    // The same request again: a replay, refused before the question is read.
    saysNothing(await ask(undefined, () => header, text));

    // Signed, but about no call on the record, or under another key: no worker is asked.
    for (const [body, what] of [
      [question(key, "invented"), "an invented call"],
      [question("another-key"), "another key"],
    ] as const) {
      const r = await ask(body, sign);
      expect(r.status, what).toBe(403);
      expect(r.text, what).not.toMatch(/"known"/);
    }
  });

  // Last in the file: the agent's lease ends up with a node that does not exist, and is given back at the end.
  it("an owner that lost the agent stops its own request for a call, not the attempt the new owner sent since", async () => {
    const keys = readKeyFile(join(c.p.dir, ".wardrik", "secret-key"));
    const ring = { current: keys[0]!, readable: keys, source: "test" };
    const sign = (path: string) => (text: string) => signRequest(ring, "POST", path, text);
    // n1 owns the agent; its lookup goes to the worker on n2 (attempt 1) and runs there until released.
    await send(c.nodes[0]!, c.agentId, "h-stale");
    const started = await waitUntil(() => w.log().find((l) => l.tag === "h-stale/lookup" && l.phase === "start"), "the held lookup");
    const callId = started.key;
    const db = await openClusterDb(c);
    try {
      // n1 froze past its lease: another node took the agent over and sent the safe call again, attempt 2, to n2.
      await db.run("UPDATE agents SET owner_node = 'n9', lease_token = lease_token + 1, lease_expires = 9000000000000 WHERE id = ?", [
        c.agentId,
      ]);
      await db.run("UPDATE calls SET attempts = 2 WHERE id = ?", [callId]);
      const run = (await db.get<{ run: string }>("SELECT run FROM calls WHERE id = ?", [callId]))!.run;
      const again = {
        org: "default",
        tool: "lookup",
        args: { tag: "h-stale/lookup", ms: 20, hold: true },
        decision: "allow",
        ctx: { agent: c.agentId, run, callId, idempotencyKey: callId, attempt: 2, timeoutMs: 60_000 },
      };
      const second = post(again, sign("/v1/cluster/calls"));
      await waitUntil(
        () => c.nodes[1]!.stderr().includes(`"callId":"${callId}","attempt":1,"msg":"a call sent again while in flight joins it"`),
        "attempt 2 to join",
      );
      // n1 learns at its next renewal that it lost the agent, and stops its own request: attempt 1's, only that one.
      await waitUntil(() => c.nodes[0]!.stderr().includes("lost the lease of an agent to another node"), "n1 to learn it lost the agent");
      // Said again here in case n1's word has not reached n2 yet: an abort names its attempt.
      const stop = await post(
        { callId, attempt: 1, reason: "shutdown" },
        sign("/v1/cluster/calls/abort"),
        undefined,
        "/v1/cluster/calls/abort",
      );
      w.release("h-stale");
      const answer = await second;
      expect(answer.status, answer.text).toBe(200);
      expect(JSON.parse(answer.text)).toMatchObject({ outcome: { ok: true, output: { tag: "h-stale/lookup", key: callId } } });
      expect(stop.status, stop.text).toBe(200);
      expect(w.log().filter((l) => l.key === callId && l.phase === "start")).toHaveLength(1);
    } finally {
      await db.run("UPDATE agents SET owner_node = NULL, lease_expires = 0 WHERE id = ?", [c.agentId]);
      await db.close();
    }
  });
});
