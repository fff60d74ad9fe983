import type { Logger } from "../log/logger.js";
import type { Ownership, Poke } from "../runtime/ownership.js";
import type { Tx } from "../store/db.js";
import type { PostgresDb } from "../store/postgres-db.js";
import type { Store } from "../store/store.js";
import type { Unsubscribe } from "../store/postgres-listener.js";

/** Taken off a lease's proven time (at most a quarter of the lease): clocks may run at slightly different rates. */
const PROOF_MARGIN_MS = 250;

/** The channel on which nodes poke the owner of an agent. */
export const POKE_CHANNEL = "wardrik_pokes";

export interface ClusterOptions {
  node: string;
  /** How long a lease lasts without renewal (config `cluster.lease`, default 10 s). */
  leaseMs: number;
  /** How often a node looks for agents whose owner died (default 500 ms). */
  scanMs?: number;
  log: Logger;
}

/** What the cluster asks of the runtime of this node. */
export interface ClusterRuntime {
  /** Agents this node drives, with the token of each lease. */
  leases(): Map<string, number>;
  /** Takes an agent that has work (if it can) and drives it; also re-reads an agent it drives already. */
  resume(agentId: string): Promise<void>;
  /** Stops driving an agent another node owns now. */
  drop(agentId: string): Promise<void>;
  poked(agentId: string, poke: Poke): void;
}

/**
 * Ownership in a cluster of daemons on one PostgreSQL database. Each awake
 * agent is held by one node through a lease renewed while the node lives;
 * when a node dies its leases run out and the others take its agents over
 * within the lease and one scan. Every write for an agent checks its lease's
 * fencing token (see store/writer.ts), so a node that lost a lease, even one
 * that was paused and does not know it yet, commits nothing more for it. A
 * message or decision that arrives at another node is committed there and
 * reaches the owner as a NOTIFY on the same commit.
 */
export class ClusterOwnership implements Ownership {
  readonly node: string;
  private runtime: ClusterRuntime | undefined;
  private renewTimer: NodeJS.Timeout | undefined;
  private scanTimer: NodeJS.Timeout | undefined;
  private unlisten: Unsubscribe | undefined;
  private scanning = false;
  private closed = false;
  private readonly renewEvery: number;
  /** Until when (performance.now()) each lease surely holds: measured from before the claim or renewal that proved it. */
  private readonly provenUntil = new Map<string, { token: number; until: number }>();

  constructor(
    private readonly db: PostgresDb,
    private readonly store: Store,
    private readonly o: ClusterOptions,
  ) {
    this.node = o.node;
    this.renewEvery = Math.max(50, Math.floor(o.leaseMs / 3));
  }

  async claim(agentId: string): Promise<number | undefined> {
    const from = performance.now();
    const token = await this.store.leases.claim(agentId, this.node, this.o.leaseMs);
    if (token !== undefined) this.proven(agentId, token, from);
    return token;
  }

  heldNow(agentId: string, token: number): true | Promise<boolean> {
    const p = this.provenUntil.get(agentId);
    if (p?.token === token && performance.now() < p.until) return true;
    const from = performance.now();
    return this.store.leases.extend(agentId, this.node, token, this.o.leaseMs).then((held) => {
      if (held) this.proven(agentId, token, from);
      return held;
    });
  }

  /**
   * A lease extended by a statement sent at `from`: the database set its end at
   * least a lease after that, so no node can take it before `from` + lease (less
   * a margin for the clocks' rates); this node's clock tells, with no query.
   */
  private proven(agentId: string, token: number, from: number): void {
    const until = from + this.o.leaseMs - Math.min(PROOF_MARGIN_MS, this.o.leaseMs / 4);
    const p = this.provenUntil.get(agentId);
    if (p?.token !== token || p.until < until) this.provenUntil.set(agentId, { token, until });
  }

  async release(tx: Tx, agentId: string, token: number): Promise<void> {
    await this.store.leases.release(tx, agentId, this.node, token);
  }

  async poke(tx: Tx, agentId: string, poke: Poke): Promise<void> {
    await this.db.notify(tx, POKE_CHANNEL, JSON.stringify({ agent: agentId, ...poke }));
  }

  /** Nothing to remember: the next claim asks the database, and another live node keeps what it holds. */
  lost(): void {}

  /** Starts renewing leases, taking over orphaned agents and hearing pokes, for `runtime`. */
  async start(runtime: ClusterRuntime): Promise<void> {
    this.runtime = runtime;
    this.unlisten = await this.db.listen(POKE_CHANNEL, (payload) => this.onPoke(payload), {
      // Pokes sent while the connection was down are gone: look at every agent this node drives again.
      onReconnect: () => {
        for (const id of runtime.leases().keys()) void runtime.resume(id).catch(() => undefined);
      },
    });
    this.renewTimer = setInterval(() => void this.renew(), this.renewEvery);
    this.renewTimer.unref();
    this.scanTimer = setInterval(() => void this.scan(), this.o.scanMs ?? 500);
    this.scanTimer.unref();
    void this.scan();
  }

  private onPoke(payload: string): void {
    const rt = this.runtime;
    if (!rt || this.closed) return;
    let poke: Poke & { agent: string };
    try {
      poke = JSON.parse(payload) as Poke & { agent: string };
    } catch {
      return;
    }
    if (rt.leases().has(poke.agent)) {
      rt.poked(poke.agent, poke);
      return;
    }
    // Work for an agent nobody drives (asleep, or its owner died): whoever is first takes it.
    if (poke.kind === "work")
      void rt
        .resume(poke.agent)
        .catch((err: unknown) => this.o.log("warn", "taking an agent failed", { agent: poke.agent, err: String(err) }));
  }

  /** Extends this node's leases, and stops driving any agent another node took meanwhile. */
  private async renew(): Promise<void> {
    const rt = this.runtime;
    if (!rt || this.closed) return;
    try {
      const before = rt.leases();
      const from = performance.now();
      // A lease skipped now (its row was being written) is renewed waiting once it would run out before two more rounds.
      const leases = await this.store.leases.renew(this.node, this.o.leaseMs, 2 * this.renewEvery);
      const held = new Map(leases.map((l) => [l.agentId, l.token]));
      for (const l of leases) if (l.renewed) this.proven(l.agentId, l.token, from);
      for (const agentId of this.provenUntil.keys()) if (!held.has(agentId)) this.provenUntil.delete(agentId);
      for (const agentId of leasesTakenElsewhere(before, held, rt.leases())) {
        this.o.log("warn", "lost the lease of an agent to another node", { agent: agentId, node: this.node });
        await rt.drop(agentId);
      }
    } catch (err) {
      this.o.log("warn", "renewing leases failed; retrying", { err: String(err) });
    }
  }

  /** Takes over agents with work whose owner is gone (or that nobody owns). */
  private async scan(): Promise<void> {
    const rt = this.runtime;
    if (!rt || this.closed || this.scanning) return;
    this.scanning = true;
    try {
      for (const agentId of await this.store.leases.orphansWithWork(16)) {
        if (this.closed) break;
        await rt.resume(agentId);
      }
    } catch (err) {
      this.o.log("warn", "looking for agents to take over failed; retrying", { err: String(err) });
    } finally {
      this.scanning = false;
    }
  }

  /** Stops the loops; the leases run out by themselves unless `releaseAll` gives them up now. */
  async close(releaseAll: boolean): Promise<void> {
    this.closed = true;
    clearInterval(this.renewTimer);
    clearInterval(this.scanTimer);
    await this.unlisten?.();
    if (releaseAll) await this.store.leases.releaseNode(this.node);
  }
}

/**
 * The agents this node drives whose lease another node has taken: those it
 * drove with the same token before the renewal read the table (`before`),
 * still drives (`now`), and that the renewal did not find held with that
 * token (`held`). A lease claimed while the renewal's query ran is missing
 * from its answer; judging it by that answer would drop an agent whose row
 * still names this node, so no node would ever take it over and its running
 * turn would hang.
 */
export function leasesTakenElsewhere(before: Map<string, number>, held: Map<string, number>, now: Map<string, number>): string[] {
  const lost: string[] = [];
  for (const [agentId, token] of now) if (before.get(agentId) === token && held.get(agentId) !== token) lost.push(agentId);
  return lost;
}
