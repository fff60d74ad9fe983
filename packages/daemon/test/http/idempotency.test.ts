/**
 * The Idempotency-Key middleware on a Hono app over a real SQLite file, with a
 * route that counts how often it really ran. Two owners stand for two daemon
 * processes sharing one database (the first one died mid-request).
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Hono } from "hono";
import { afterEach, describe, expect, it } from "vitest";
import { WardrikError } from "@wardrik/protocol";
import { idempotency } from "../../src/http/idempotency.js";
import type { ApiEnv } from "../../src/http/route-table.js";
import { toWardrikError } from "../../src/http/server.js";
import { IdempotencyKeys } from "../../src/store/idempotency-keys.js";
import { SqliteDb } from "../../src/store/sqlite-db.js";

const open: { db: SqliteDb; dir: string }[] = [];
afterEach(async () => {
  for (const o of open.splice(0)) {
    await o.db.close();
    rmSync(o.dir, { recursive: true, force: true });
  }
});

function setup(owner = "daemon-1", db?: SqliteDb) {
  if (!db) {
    const dir = mkdtempSync(join(tmpdir(), "wardrik-idem-mw-"));
    db = new SqliteDb(join(dir, "t.db"));
    open.push({ db, dir });
  }
  const ran: string[] = [];
  let gate: Promise<void> = Promise.resolve();
  let failNext: WardrikError | undefined;
  const app = new Hono<ApiEnv>();
  app.onError((err, c) => {
    const e = toWardrikError(err);
    return c.json(e.toJSON(), e.status as 400);
  });
  app.use("*", async (c, next) => {
    c.set("org", c.req.header("x-org") ?? "default");
    c.set("admin", false);
    await next();
  });
  app.use("*", idempotency(new IdempotencyKeys(db), { owner }));
  app.post("/v1/things", async (c) => {
    const body = (await c.req.json()) as { text: string };
    await gate;
    const e = failNext;
    failNext = undefined;
    if (e) throw e;
    ran.push(body.text);
    return c.json({ id: `thing_${ran.length}`, text: body.text }, 201);
  });
  app.post("/v1/tokens", async (c) => c.json({ token: `tok_${ran.push("token")}` }, 201));
  const post = (path: string, body: unknown, key?: string, org?: string) =>
    app.request(path, {
      method: "POST",
      headers: { "content-type": "application/json", ...(key ? { "idempotency-key": key } : {}), ...(org ? { "x-org": org } : {}) },
      body: JSON.stringify(body),
    });
  return {
    db,
    ran,
    post,
    hold() {
      let release!: () => void;
      gate = new Promise((r) => (release = r));
      return release;
    },
    failWith(e: WardrikError) {
      failNext = e;
    },
  };
}

/**
 * An app with the message route's shape: the answer is stored in the
 * transaction that queues the message. Two owners on one database stand for
 * two daemon processes (or nodes).
 */
function queueApp(owner: string, shared?: SqliteDb) {
  let db = shared;
  if (!db) {
    const dir = mkdtempSync(join(tmpdir(), "wardrik-idem-queue-"));
    db = new SqliteDb(join(dir, "t.db"));
    open.push({ db, dir });
  }
  const on = db;
  let gate: Promise<void> = Promise.resolve();
  let arrived!: () => void;
  const reached = new Promise<void>((r) => (arrived = r));
  const app = new Hono<ApiEnv>();
  app.onError((err, c) => {
    const e = toWardrikError(err);
    return c.json(e.toJSON(), e.status as 400);
  });
  app.use("*", async (c, next) => {
    c.set("org", "default");
    c.set("admin", false);
    await next();
  });
  app.use("*", idempotency(new IdempotencyKeys(on), { owner }));
  app.post("/v1/agents/:id/messages", async (c) => {
    const storeAnswerIn = c.get("storeAnswerIn")!;
    arrived();
    await gate;
    const body = JSON.stringify({ message: `msg_${owner}` });
    await on.transaction(async (tx) => {
      await tx.run("INSERT INTO files (agent_id, path, content, updated_at) VALUES ('agt_1', ?, 'queued', 'now')", [
        `${owner}/${c.req.header("idempotency-key")}`,
      ]);
      await storeAnswerIn(tx, { status: 202, body, contentType: "application/json" });
    });
    return c.body(body, 202, { "content-type": "application/json" });
  });
  return {
    db: on,
    post: (key: string) =>
      app.request("/v1/agents/agt_1/messages", {
        method: "POST",
        headers: { "content-type": "application/json", "idempotency-key": key },
        body: JSON.stringify({ text: "hello" }),
      }),
    hold() {
      let release!: () => void;
      gate = new Promise((r) => (release = r));
      return release;
    },
    /** Resolves once a request has claimed its key and reached the route. */
    claimed: () => reached,
    queued: () => on.all("SELECT path FROM files WHERE agent_id = 'agt_1'"),
  };
}

describe("Idempotency-Key", () => {
  it("replays the first answer to a retry with the same key and body, with Idempotent-Replayed, and runs once", async () => {
    const s = setup();
    const first = await s.post("/v1/things", { text: "a" }, "k1");
    const again = await s.post("/v1/things", { text: "a" }, "k1");
    expect(first.status).toBe(201);
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    expect(again.status).toBe(201);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(await again.json()).toEqual(await first.json());
    expect(s.ran).toEqual(["a"]);
  });

  it("refuses the same key with another body: 422 idempotency_conflict", async () => {
    const s = setup();
    await s.post("/v1/things", { text: "a" }, "k1");
    const other = await s.post("/v1/things", { text: "b" }, "k1");
    expect(other.status).toBe(422);
    expect(await other.json()).toMatchObject({ code: "idempotency_conflict", retryable: false });
    expect(s.ran).toEqual(["a"]);
  });

  it("a retry while the first request still runs gets 409 retryable; the work happens once", async () => {
    const s = setup();
    const release = s.hold();
    const first = s.post("/v1/things", { text: "a" }, "k1");
    await new Promise((r) => setTimeout(r, 20));
    const during = await s.post("/v1/things", { text: "a" }, "k1");
    expect(during.status).toBe(409);
    expect(await during.json()).toMatchObject({ code: "conflict", retryable: true });
    release();
    expect((await first).status).toBe(201);
    expect(s.ran).toEqual(["a"]);
  });

  it("keys are per org: another org's request with the same key runs", async () => {
    const s = setup();
    await s.post("/v1/things", { text: "a" }, "k1", "one");
    const other = await s.post("/v1/things", { text: "a" }, "k1", "two");
    expect(other.headers.get("idempotent-replayed")).toBeNull();
    expect(s.ran).toEqual(["a", "a"]);
  });

  it("a failure a retry may fix is not kept: the retry runs anew; a final 4xx is replayed", async () => {
    const s = setup();
    s.failWith(new WardrikError("unavailable", "busy", { retryable: true }));
    expect((await s.post("/v1/things", { text: "a" }, "k1")).status).toBe(503);
    expect((await s.post("/v1/things", { text: "a" }, "k1")).status).toBe(201);
    s.failWith(new WardrikError("not_found", "gone"));
    expect((await s.post("/v1/things", { text: "b" }, "k2")).status).toBe(404);
    const replay = await s.post("/v1/things", { text: "b" }, "k2");
    expect(replay.status).toBe(404);
    expect(replay.headers.get("idempotent-replayed")).toBe("true");
    expect(s.ran).toEqual(["a"]);
  });

  it("a key left pending by a daemon that died is refused without running again", async () => {
    const dead = setup("daemon-1");
    dead.hold(); // never released: the process "dies" mid-request
    void dead.post("/v1/things", { text: "a" }, "k1");
    await new Promise((r) => setTimeout(r, 20));
    const successor = setup("daemon-2", dead.db);
    const r = await successor.post("/v1/things", { text: "a" }, "k1");
    expect(r.status).toBe(409);
    expect(await r.json()).toMatchObject({ code: "conflict", retryable: false, detail: expect.stringMatching(/interrupted/) });
    expect(successor.ran).toEqual([]);
  });

  it("requests without a key are not touched; token creation refuses a key and mints nothing", async () => {
    const s = setup();
    await s.post("/v1/things", { text: "a" });
    await s.post("/v1/things", { text: "a" });
    for (let i = 0; i < 2; i++) {
      const r = await s.post("/v1/tokens", {}, "k1");
      expect(r.status).toBe(400);
      expect(await r.json()).toMatchObject({
        code: "bad_request",
        detail: expect.stringMatching(/does not take an Idempotency-Key/),
      });
    }
    expect(s.ran).toEqual(["a", "a"]);
    const t = (await (await s.post("/v1/tokens", {})).json()) as { token: string };
    expect(s.ran).toEqual(["a", "a", "token"]);
    expect(t.token).toBe("tok_3");
  });

  it("refuses a key that is not printable ASCII", async () => {
    const s = setup();
    const r = await s.post("/v1/things", { text: "a" }, "has space");
    expect(r.status).toBe(400);
  });

  it("a message whose first attempt died before its transaction committed is queued by the retry, once", async () => {
    const dead = queueApp("daemon-1");
    dead.hold(); // never released: the process "dies" after claiming the key, before the work commits
    void dead.post("k1");
    await dead.claimed();
    const successor = queueApp("daemon-2", dead.db);
    const r = await successor.post("k1");
    expect(r.status).toBe(202);
    expect(r.headers.get("idempotent-replayed")).toBeNull();
    const again = await successor.post("k1");
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(await again.json()).toEqual(await r.json());
    expect(await successor.queued()).toHaveLength(1);
  });

  it("a first attempt that commits after a retry with its key did rolls back: the message is queued once", async () => {
    const slow = queueApp("daemon-1");
    const release = slow.hold();
    const first = slow.post("k1");
    await slow.claimed();
    const other = queueApp("daemon-2", slow.db);
    expect((await other.post("k1")).status).toBe(202);
    release();
    const late = await first;
    expect(late.status).toBe(409);
    expect(await late.json()).toMatchObject({ code: "conflict", retryable: true });
    expect(await other.queued()).toHaveLength(1);
    // Its client retries and gets the answer the other attempt stored.
    const retried = await slow.post("k1");
    expect(retried.headers.get("idempotent-replayed")).toBe("true");
  });

  it("a new key of a message is recorded by the transaction that queues it: one commit, not a claim first", async () => {
    const app = queueApp("daemon-1");
    // The first request also purges expired keys (a transaction of its own): count from the second.
    await app.post("k0");
    const commits = app.db.stats.commits;
    const r = await app.post("k1");
    expect(r.status).toBe(202);
    expect(app.db.stats.commits - commits).toBe(1);
    const again = await app.post("k1");
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(await again.json()).toEqual(await r.json());
    expect(await app.queued()).toHaveLength(2);
  });

  it("a route that stores its answer in its own transaction: work and answer commit together, or neither does", async () => {
    const dir = mkdtempSync(join(tmpdir(), "wardrik-idem-tx-"));
    const db = new SqliteDb(join(dir, "t.db"));
    open.push({ db, dir });
    await db.run("CREATE TABLE things (text TEXT NOT NULL)");
    let failAfterAnswer = true;
    const app = new Hono<ApiEnv>();
    app.onError((err, c) => c.json(toWardrikError(err).toJSON(), 500));
    app.use("*", async (c, next) => {
      c.set("org", "default");
      c.set("admin", false);
      await next();
    });
    app.use("*", idempotency(new IdempotencyKeys(db), { owner: "d1" }));
    app.post("/v1/things", async (c) => {
      const storeAnswerIn = c.get("storeAnswerIn")!;
      const body = JSON.stringify({ stored: true });
      await db.transaction(async (tx) => {
        await tx.run("INSERT INTO things (text) VALUES ('x')");
        await storeAnswerIn(tx, { status: 201, body, contentType: "application/json" });
        if (failAfterAnswer) throw new Error("the commit failed");
      });
      return c.body(body, 201, { "content-type": "application/json" });
    });
    const post = () => app.request("/v1/things", { method: "POST", headers: { "idempotency-key": "k1" }, body: "{}" });
    // The transaction failed after the answer was written: neither the work nor the answer stand, and the key is free.
    expect((await post()).status).toBe(500);
    expect(await db.all("SELECT * FROM things")).toEqual([]);
    failAfterAnswer = false;
    const first = await post();
    expect(first.status).toBe(201);
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    const again = await post();
    expect(again.status).toBe(201);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(await again.json()).toEqual({ stored: true });
    expect(await db.all("SELECT * FROM things")).toHaveLength(1);
  });
});
