import { hostname } from "node:os";
import type { Logger } from "../log/logger.js";
import { LocalOwnership, type Ownership } from "../runtime/ownership.js";
import type { Runtime } from "../runtime/runtime.js";
import type { OpenedDb } from "../store/open-db.js";
import { PostgresDb } from "../store/postgres-db.js";
import type { Store } from "../store/store.js";
import type { EventBus } from "../events/event-bus.js";
import type { KeyRing } from "../secrets/key-ring.js";
import { ClusterOwnership } from "./cluster-ownership.js";
import { EventRelay } from "./event-relay.js";
import { RemoteWorkerCalls } from "./remote-worker-calls.js";

export interface NodeOptions {
  /** `wardrik daemon --node NAME`; default the host name and port. */
  node?: string | undefined;
  port: number;
  /** config.yaml `cluster.lease`, seconds. */
  leaseSeconds: number;
  log: Logger;
  /** The secrets keys, which the node key is derived from (see node-key.ts). */
  keyRing: () => KeyRing;
}

/** This daemon as a node: who it is, how it owns agents, and the loops that keep that true. */
export interface NodeOwnership {
  readonly node: string;
  readonly ownership: Ownership;
  readonly clustered: boolean;
  /** In a cluster: workers connected to the other nodes. */
  readonly remoteWorkers?: RemoteWorkerCalls | undefined;
  /** Starts the node's loops once the daemon listens at `url`. */
  start(runtime: Runtime, url: string): Promise<void>;
  /** Stops them; `handOver` gives this node's agents up at once so other nodes take them without waiting out the lease. */
  close(handOver: boolean): Promise<void>;
}

const HEARTBEAT_MS = 2_000;

/**
 * How often a node says it lives: other nodes count it (and the workers
 * connected to it) alive for one lease after its last beat, so it beats at
 * least three times a lease; a beat that comes late must not make its
 * workers vanish from the others' view (with a 2 s lease and a beat every
 * 2 s they did, and a call saved in that moment failed "No worker serves").
 */
export function heartbeatMs(leaseSeconds: number): number {
  return Math.max(100, Math.min(HEARTBEAT_MS, Math.floor((leaseSeconds * 1000) / 3)));
}

/** The default node name: the host and the port (the pid when the port is chosen by the system). */
export function defaultNodeName(port: number): string {
  return `${hostname()}:${port === 0 ? process.pid : port}`;
}

export async function nodeOwnership(db: OpenedDb, store: Store, bus: EventBus, o: NodeOptions): Promise<NodeOwnership> {
  const node = o.node ?? defaultNodeName(o.port);
  const cluster =
    db instanceof PostgresDb ? new ClusterOwnership(db, store, { node, leaseMs: o.leaseSeconds * 1000, log: o.log }) : undefined;
  const relay = db instanceof PostgresDb ? new EventRelay(db, bus, node, o.log) : undefined;
  const remoteWorkers =
    db instanceof PostgresDb ? new RemoteWorkerCalls(db, store, node, o.keyRing, o.leaseSeconds * 1000, o.log) : undefined;
  // Before any worker can connect here: what this node's previous life published (it was killed, so it never took it
  // back) would, once this node beats again, send other nodes' calls here for tools no worker of this node serves.
  if (remoteWorkers) await store.nodes.forgetWorkerTools(node);
  const ownership = cluster ?? new LocalOwnership(node, store.leases);
  let heartbeat: NodeJS.Timeout | undefined;
  const startedAt = new Date().toISOString();
  return {
    node,
    ownership,
    clustered: cluster !== undefined,
    remoteWorkers,
    async start(runtime, url) {
      const beat = () => store.nodes.heartbeat({ name: node, url, pid: process.pid, host: hostname(), startedAt });
      await beat();
      heartbeat = setInterval(
        () => void beat().catch((err: unknown) => o.log("warn", "node heartbeat failed", { err: String(err) })),
        heartbeatMs(o.leaseSeconds),
      );
      heartbeat.unref();
      await relay?.start();
      await remoteWorkers?.start();
      await cluster?.start({
        leases: () => runtime.leases(),
        resume: (id) => runtime.resume(id),
        drop: (id) => runtime.dropDriver(id),
        poked: (id, poke) => runtime.poked(id, poke),
      });
      o.log("info", cluster ? "node joined the cluster" : "node started", { node, url, ...(cluster ? { lease_s: o.leaseSeconds } : {}) });
    },
    async close(handOver) {
      clearInterval(heartbeat);
      await cluster?.close(handOver);
      await relay?.close();
      await remoteWorkers?.close();
    },
  };
}
