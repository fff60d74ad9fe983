/**
 * A node's lease renewal against a real PostgreSQL: it stops driving an agent
 * only when another node took it, never one it claimed while the renewal's
 * query was under way (that agent's row still names this node, so nobody
 * else would ever take it over, and its running turn would hang).
 */
import { afterEach, describe, expect, it } from "vitest";
import { ClusterOwnership, leasesTakenElsewhere, type ClusterRuntime } from "../../src/cluster/cluster-ownership.js";
import { EventBus } from "../../src/events/event-bus.js";
import { systemClock, ulidIds } from "../../src/ids.js";
import type { Db } from "../../src/store/db.js";
import type { PostgresDb } from "../../src/store/postgres-db.js";
import { Store } from "../../src/store/store.js";
import { openTestDb } from "../helpers/test-database.js";
import { waitFor } from "../helpers/wait.js";

const opened: Db[] = [];
afterEach(async () => {
  for (const db of opened.splice(0)) await db.close();
});

async function setup() {
  const { db } = await openTestDb();
  opened.push(db);
  const store = new Store(db, new EventBus(), ulidIds(), systemClock);
  const agent = async (name: string) => {
    const id = store.ids.next("agent");
    await store.tx((w) =>
      store.agents.insert(w, { id, org: "default", name, source: "api", definition: null, file: null, status: "idle", reason: null }),
    );
    return id;
  };
  const ownership = (node: string, leaseMs = 10_000) =>
    new ClusterOwnership(db as PostgresDb, store, { node, leaseMs, log: () => undefined });
  return { store, agent, ownership };
}

/** A runtime whose lease list can change between two reads, as a claim finishing mid-renewal makes it. */
function runtimeWith(reads: Map<string, number>[]): ClusterRuntime & { dropped: string[] } {
  const dropped: string[] = [];
  let read = 0;
  return {
    dropped,
    leases: () => reads[Math.min(read++, reads.length - 1)]!,
    resume: async () => undefined,
    drop: async (id) => void dropped.push(id),
    poked: () => undefined,
  };
}

async function renew(o: ClusterOwnership, rt: ClusterRuntime): Promise<void> {
  (o as unknown as { runtime: ClusterRuntime }).runtime = rt;
  await (o as unknown as { renew(): Promise<void> }).renew();
}

describe("lease renewal", () => {
  it("keeps an agent claimed while the renewal ran, and drops one another node took", async () => {
    const { store, agent, ownership } = await setup();
    const a = await agent("a");
    const b = await agent("b");
    const n1 = ownership("n1");
    const n2 = ownership("n2");
    const tokenB = await n1.claim(b);
    expect(tokenB).toBeDefined();
    // Node n1's lease on b runs out and n2 takes b: n1 must stop driving b.
    await store.db.run("UPDATE agents SET lease_expires = 0 WHERE id = ?", [b]);
    expect(await n2.claim(b)).toBe(tokenB! + 1);
    // a is claimed by n1 only after the renewal read the table (here: after the renewal, same effect):
    // the renewal's answer lacks it, while n1's runtime already drives it.
    const rt = runtimeWith([new Map([[b, tokenB!]])]);
    const renewing = renew(n1, rt);
    const tokenA = await n1.claim(a);
    rt.leases = () =>
      new Map([
        [a, tokenA!],
        [b, tokenB!],
      ]);
    await renewing;
    expect(rt.dropped).toEqual([b]);
    // The next renewal sees a held by n1 and keeps it.
    await renew(n1, runtimeWith([new Map([[a, tokenA!]])]));
    expect(await store.leases.owner(a)).toBe("n1");
  });

  it("does not wait for an agent whose row a transaction holds, and renews it waiting once it would run out", async () => {
    const { store, agent, ownership } = await setup();
    const busy = await agent("busy");
    const idle = await agent("idle");
    const n1 = ownership("n1");
    const busyToken = (await n1.claim(busy))!;
    await n1.claim(idle);
    const expiresOf = async (id: string) =>
      Number((await store.db.get<{ e: number }>("SELECT lease_expires AS e FROM agents WHERE id = ?", [id]))!.e);

    // A writer holds busy's row (as the owner's turn does between its agent update and its commit).
    let release!: () => void;
    let locked!: () => void;
    const isLocked = new Promise<void>((r) => (locked = r));
    const holder = store.db.transaction(async (tx) => {
      await tx.run("UPDATE agents SET status = status WHERE id = ?", [busy]);
      locked();
      await new Promise<void>((r) => (release = r));
    });
    await isLocked;
    const [busyBefore, idleBefore] = [await expiresOf(busy), await expiresOf(idle)];
    await new Promise((r) => setTimeout(r, 20));
    // Not urgent yet: busy is skipped, idle renewed, and the answer still lists both, with their tokens.
    const leases = await store.leases.renew("n1", 10_000, 0);
    expect(new Map(leases.map((l) => [l.agentId, l.token])).get(busy)).toBe(busyToken);
    expect(leases.map((l) => l.agentId).sort()).toEqual([busy, idle].sort());
    expect(await expiresOf(idle)).toBeGreaterThan(idleBefore);
    expect(await expiresOf(busy)).toBe(busyBefore);
    // Urgent (it would run out within 20 s): renewed waiting, once the writer commits.
    let renewed = false;
    const urgent = store.leases.renew("n1", 10_000, 20_000).then(() => (renewed = true));
    await new Promise((r) => setTimeout(r, 100));
    expect(renewed).toBe(false);
    release();
    await holder;
    await urgent;
    expect(await expiresOf(busy)).toBeGreaterThan(busyBefore);
  });

  it("a node frozen past its lease asks the database before a call leaves, and learns that another node took the agent", async () => {
    const { store, agent, ownership } = await setup();
    const taken = await agent("taken");
    const kept = await agent("kept");
    // A short lease, never renewed here: as a node frozen (SIGSTOP) right after it saved a round, before it sent the calls.
    // Long enough that the claim's own proof (the lease less a quarter) outlasts a claim on a busy machine: with 300 ms
    // (proof 225 ms), claiming a second agent before the check below took longer than that at load 13.
    const n1 = ownership("n1", 1_000);
    const n2 = ownership("n2", 1_000);
    const token = (await n1.claim(taken))!;
    // Just claimed: held for sure, told at once with no query (a call is sent with no wait).
    expect(n1.heldNow(taken, token)).toBe(true);
    const keptToken = (await n1.claim(kept))!;
    // The lease runs out and n2 takes the agent over (it then retries the round's safe calls and stores their results).
    await waitFor(async () => (await n2.claim(taken)) !== undefined, "n2 to take the agent once n1's lease ran out", 10_000, 20);
    // n1 wakes: its clock says the proof is old, the database says the agent is n2's. The stale call does not go.
    const held = n1.heldNow(taken, token);
    expect(held).toBeInstanceOf(Promise);
    expect(await held).toBe(false);
    // A lease that ran out with nobody taking it is still n1's: extended, and known again with no query.
    await waitFor(async () => (await store.leases.owner(kept)) === undefined, "kept's lease to run out", 10_000, 20);
    expect(await n1.heldNow(kept, keptToken)).toBe(true);
    expect(await store.leases.owner(kept)).toBe("n1");
    expect(n1.heldNow(kept, keptToken)).toBe(true);
  });

  it("the rule: only a lease held before the renewal and not found by it was taken elsewhere", () => {
    const m = (...e: [string, number][]) => new Map(e);
    // Claimed while the renewal ran: not in `before`, not in the answer. Kept.
    expect(leasesTakenElsewhere(m(), m(), m(["a", 1]))).toEqual([]);
    // Held before and after, found by the renewal: kept.
    expect(leasesTakenElsewhere(m(["a", 1]), m(["a", 1]), m(["a", 1]))).toEqual([]);
    // Held before, not found (another node took it): dropped.
    expect(leasesTakenElsewhere(m(["a", 1]), m(), m(["a", 1]))).toEqual(["a"]);
    // Found with another token (taken and given back meanwhile): dropped.
    expect(leasesTakenElsewhere(m(["a", 1]), m(["a", 3]), m(["a", 1]))).toEqual(["a"]);
    // Re-claimed by this node during the renewal (new token): judged next time.
    expect(leasesTakenElsewhere(m(["a", 1]), m(), m(["a", 2]))).toEqual([]);
    // Dropped by the runtime meanwhile: nothing to do.
    expect(leasesTakenElsewhere(m(["a", 1]), m(), m())).toEqual([]);
  });
});
