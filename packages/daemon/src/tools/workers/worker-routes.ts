import type { WorkerToolDescriptor } from "@wardrik/protocol";
import type { WorkerConnection } from "./worker-connection.js";

/** The workers of one org that serve one tool, and who waits for one to appear. */
interface Route {
  workers: WorkerConnection[];
  next: number;
  waiters: Set<() => void>;
}

/**
 * Which connected workers serve which tool, per org. Calls are spread over a
 * tool's workers (fewest in flight first, ties alternating), and whoever
 * waits for a tool (a call right after a start) is woken when one registers.
 */
export class WorkerRoutes {
  private readonly byOrg = new Map<string, Map<string, Route>>();

  private route(org: string, tool: string, create: true): Route;
  private route(org: string, tool: string, create: false): Route | undefined;
  private route(org: string, tool: string, create: boolean): Route | undefined {
    let byTool = this.byOrg.get(org);
    if (!byTool) {
      if (!create) return undefined;
      byTool = new Map();
      this.byOrg.set(org, byTool);
    }
    let route = byTool.get(tool);
    if (!route && create) {
      route = { workers: [], next: 0, waiters: new Set() };
      byTool.set(tool, route);
    }
    return route;
  }

  add(conn: WorkerConnection, tool: string): void {
    const route = this.route(conn.org, tool, true);
    if (!route.workers.includes(conn)) route.workers.push(conn);
    for (const waiter of [...route.waiters]) waiter();
  }

  remove(conn: WorkerConnection, tool: string): void {
    const route = this.route(conn.org, tool, false);
    if (!route) return;
    const i = route.workers.indexOf(conn);
    if (i >= 0) route.workers.splice(i, 1);
    this.prune(conn.org, tool, route);
  }

  private prune(org: string, tool: string, route: Route): void {
    if (route.workers.length > 0 || route.waiters.size > 0) return;
    const byTool = this.byOrg.get(org);
    byTool?.delete(tool);
    if (byTool?.size === 0) this.byOrg.delete(org);
  }

  /** The available worker with the fewest calls in flight; the starting point rotates so ties alternate. */
  pick(org: string, tool: string): WorkerConnection | undefined {
    const route = this.route(org, tool, false);
    if (!route) return undefined;
    const n = route.workers.length;
    if (n === 0) return undefined;
    if (n === 1) return route.workers[0]!.available ? route.workers[0] : undefined;
    let best: WorkerConnection | undefined;
    for (let i = 0; i < n; i++) {
      const worker = route.workers[(route.next + i) % n]!;
      if (worker.available && (!best || worker.inFlight < best.inFlight)) best = worker;
    }
    route.next = (route.next + 1) % n;
    return best;
  }

  /** Resolves true as soon as some worker of `org` serves `tool`, false after `timeoutMs` or when `closed()` says so. */
  waitFor(org: string, tool: string, timeoutMs: number, closed: () => boolean): Promise<boolean> {
    if (this.route(org, tool, false)?.workers.some((w) => w.available)) return Promise.resolve(true);
    if (closed() || timeoutMs <= 0) return Promise.resolve(false);
    return new Promise((resolve) => {
      const route = this.route(org, tool, true);
      const done = (value: boolean): void => {
        clearTimeout(timer);
        route.waiters.delete(waiter);
        this.prune(org, tool, route);
        resolve(value);
      };
      const waiter = (): void => done(!closed());
      const timer = setTimeout(() => done(false), timeoutMs);
      route.waiters.add(waiter);
    });
  }

  /** Every tool an org's workers serve; the most recently registered worker's definition wins. */
  tools(org: string): { name: string; descriptor: WorkerToolDescriptor }[] {
    const byTool = this.byOrg.get(org);
    if (!byTool) return [];
    const out: { name: string; descriptor: WorkerToolDescriptor }[] = [];
    for (const [name, route] of byTool) {
      const descriptor = route.workers.findLast((w) => w.available)?.tools.get(name);
      if (descriptor) out.push({ name, descriptor });
    }
    return out;
  }

  /** Whether some connected worker of `org` serves `tool` (draining ones included: their definition still holds). */
  served(org: string, tool: string): boolean {
    return (this.route(org, tool, false)?.workers.length ?? 0) > 0;
  }

  /** The workers of `org` that serve `tool`, in the order they registered it. */
  workersOf(org: string, tool: string): readonly WorkerConnection[] {
    return this.route(org, tool, false)?.workers ?? [];
  }

  /**
   * Another worker that serves `tool.name` with a definition calls could not
   * share with `tool`'s: another input schema, or other safety flags. The
   * workers of one route all agree, so the first other one speaks for all.
   */
  conflict(conn: WorkerConnection, tool: WorkerToolDescriptor): { worker: WorkerConnection; differs: "schema" | "safety" } | undefined {
    const other = this.route(conn.org, tool.name, false)?.workers.find((w) => w !== conn);
    const theirs = other?.tools.get(tool.name);
    if (!other || !theirs) return undefined;
    const differs = differsIn(theirs, tool);
    return differs ? { worker: other, differs } : undefined;
  }

  /** Wakes every waiter (the gateway is closing). */
  wakeAll(): void {
    for (const byTool of this.byOrg.values()) for (const route of byTool.values()) for (const waiter of [...route.waiters]) waiter();
  }
}

/**
 * How two definitions of one tool name differ in what matters to a call: the
 * input schema (compared with keys in any order) or the safety flags. The
 * description and title may differ: the latest registered is shown.
 */
export function differsIn(a: WorkerToolDescriptor, b: WorkerToolDescriptor): "schema" | "safety" | undefined {
  if (canonicalJson(a.inputSchema) !== canonicalJson(b.inputSchema)) return "schema";
  if (a.readOnly !== b.readOnly || a.idempotent !== b.idempotent) return "safety";
  return undefined;
}

/** JSON with object keys sorted, so two schemas that say the same thing compare equal. */
function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v !== null && typeof v === "object" && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).sort(([x], [y]) => (x < y ? -1 : x > y ? 1 : 0)))
      : v,
  );
}
