import type { Tx } from "../store/db.js";
import { LeaseLostError } from "../store/writer.js";

/**
 * What another node must learn about an agent it owns: new work, turns that
 * were cancelled, a call to stop, history cleared, or a call that failed for
 * lack of a worker completed late (its round's results and history change).
 */
export type Poke =
  | { kind: "work" }
  | { kind: "cancel"; turns: string[] }
  | { kind: "kill"; call: string }
  | { kind: "cleared"; conversations: string[] }
  | { kind: "late"; run: string; call: string };

/**
 * Which node drives an agent. On one node (SQLite) this node owns every agent
 * it wakes. In a cluster an agent's owner holds a lease with a fencing token;
 * any node may record a message or a decision for an agent, and pokes its
 * owner, which then drives the turn.
 */
export interface Ownership {
  readonly node: string;
  /** Takes an agent for this node: its fencing token, or undefined when another live node owns it. */
  claim(agentId: string): Promise<number | undefined>;
  /** Gives an agent up inside `tx` (it fell asleep). */
  release(tx: Tx, agentId: string, token: number): Promise<void>;
  /** Tells the agent's owner, wherever it runs, inside `tx`: it hears once `tx` commits, never if it rolls back. */
  poke(tx: Tx, agentId: string, poke: Poke): Promise<void>;
  /** A write for the agent found its lease taken by another node (the runtime drops its driver). */
  lost(agentId: string): void;
  /**
   * Whether this node holds the agent's lease with `token` now, before a call
   * leaves for a worker (a write is fenced by the database, a call sent to a
   * process is not). `true` at once while a claim or renewal proves it; else
   * the database says (and extends it). A node frozen past its lease, whose
   * agent another node took over and whose calls it may have run again and
   * completed, thus sends nothing stale when it wakes.
   */
  heldNow(agentId: string, token: number): true | Promise<boolean>;
}

/** A lease that never runs out for practical purposes: one daemon owns the whole database. */
const FOREVER_MS = 100 * 365 * 24 * 3600 * 1000;

/**
 * One node: it owns every agent it wakes; pokes have nowhere to go (the
 * runtime acts in-process). A lease it loses was taken by another daemon on
 * the same database, which the database lock should have refused: it never
 * takes that agent back (the two would take turns running it), and says so.
 */
export class LocalOwnership implements Ownership {
  private readonly taken = new Set<string>();

  constructor(
    readonly node: string,
    private readonly leases: {
      claim(agentId: string, node: string, leaseMs: number, force?: boolean): Promise<number | undefined>;
      release(tx: Tx, agentId: string, node: string, token: number): Promise<boolean>;
    },
  ) {}

  claim(agentId: string): Promise<number | undefined> {
    if (this.taken.has(agentId))
      return Promise.reject(
        new LeaseLostError(`Agent ${agentId} was taken by another daemon on the same database; this one drives it no more.`),
      );
    return this.leases.claim(agentId, this.node, FOREVER_MS, true);
  }

  async release(tx: Tx, agentId: string, token: number): Promise<void> {
    await this.leases.release(tx, agentId, this.node, token);
  }

  poke(): Promise<void> {
    return Promise.resolve();
  }

  lost(agentId: string): void {
    this.taken.add(agentId);
  }

  /** Nobody else takes an agent from the one daemon of a database; one that did was refused (see `lost`). */
  heldNow(agentId: string): true | Promise<boolean> {
    return this.taken.has(agentId) ? Promise.resolve(false) : true;
  }
}
