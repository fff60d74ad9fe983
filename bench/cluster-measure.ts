/**
 * What bench/cluster.ts measures with: the followers that tell a client its
 * turn ended (a node's org-wide feed), the CPU of every process by class, and
 * PostgreSQL's own count of statements.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { PostgresDb } from "wardrik";
import { WORKER_FIXTURE } from "../packages/daemon/test/faults/fault-paths.js";
import type { ClusterNode } from "../packages/daemon/test/cluster/cluster-node.js";

const BIN = join(dirname(fileURLToPath(import.meta.url)), "..", "packages", "daemon", "bin", "wardrik.js");

/** pg_stat_statements, reset now; `print` writes the statements run since, per turn and by query, to stderr. */
export async function statementCounter(serverUrl: string): Promise<{ print(label: string, turns: number): Promise<void> }> {
  const admin = new PostgresDb(serverUrl, { poolSize: 1 });
  await admin.run("CREATE EXTENSION IF NOT EXISTS pg_stat_statements");
  await admin.run("SELECT pg_stat_statements_reset()");
  return {
    async print(label, turns) {
      const rows = await admin.all<{ calls: string; ms: number; q: string }>(
        "SELECT calls::text AS calls, total_exec_time AS ms, left(regexp_replace(query, '\\s+', ' ', 'g'), 120) AS q FROM pg_stat_statements WHERE query NOT LIKE '%pg_stat_statements%' AND calls >= ? ORDER BY calls DESC",
        [turns / 100],
      );
      await admin.close();
      const total = rows.reduce((a, r) => a + Number(r.calls), 0);
      console.error(`${label}: ${(total / turns).toFixed(1)} statements a turn (calls a turn, execution ms a turn, query)`);
      for (const r of rows)
        console.error(`${(Number(r.calls) / turns).toFixed(2).padStart(6)} ${(r.ms / turns).toFixed(3).padStart(7)} ${r.q}`);
    },
  };
}

/** Follows a node's org-wide feed (SSE, live only; only `agents`' events when given) and resolves, per message ID, when the turn that took it completed. */
export function followTurnEnds(
  node: ClusterNode,
  agents?: string[],
): { ready: Promise<void>; of(message: string): Promise<void>; stop(): void } {
  const runOf = new Map<string, string>();
  const done = new Set<string>();
  const waiting = new Map<string, () => void>();
  const controller = new AbortController();
  let ready!: () => void;
  const readyP = new Promise<void>((r) => (ready = r));
  const check = (message: string) => {
    const run = runOf.get(message);
    if (run && done.has(run)) waiting.get(message)?.();
  };
  void (async () => {
    const only = agents ? `&agent=${agents.join(",")}` : "";
    const res = await fetch(`${node.url}/v1/events/stream?live=only&type=turn.started,turn.completed${only}`, {
      headers: { authorization: `Bearer ${node.token}`, accept: "text/event-stream" },
      signal: controller.signal,
    });
    ready();
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let buf = "";
    for (;;) {
      const { done: end, value } = await reader.read();
      if (end) return;
      buf += decoder.decode(value, { stream: true });
      let cut: number;
      while ((cut = buf.indexOf("\n\n")) >= 0) {
        const block = buf.slice(0, cut);
        buf = buf.slice(cut + 2);
        const data = block
          .split("\n")
          .filter((l) => l.startsWith("data:"))
          .map((l) => l.slice(5).trim())
          .join("\n");
        if (!data) continue;
        const e = JSON.parse(data) as { type: string; run?: string; data: { messages?: string[] } };
        if (e.type.endsWith("turn.started")) {
          for (const m of e.data.messages ?? []) {
            runOf.set(m, e.run!);
            check(m);
          }
        } else if (e.type.endsWith("turn.completed")) {
          done.add(e.run!);
          for (const [m, r] of runOf) if (r === e.run) check(m);
        }
      }
    }
  })().catch((err: unknown) => {
    if (!controller.signal.aborted) console.error(`following ${node.name}'s feed failed: ${String(err)}`);
  });
  return {
    ready: readyP,
    of: (message) =>
      new Promise<void>((resolve) => {
        waiting.set(message, resolve);
        check(message);
      }),
    stop: () => controller.abort(),
  };
}

/** Rejects, naming what never came, when `p` takes longer than `ms`: a lost turn fails the run instead of hanging it. */
export function within<T>(ms: number, p: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no end after ${ms} ms: ${what}`)), ms);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

/** CPU ticks (user + system) of every daemon, worker and PostgreSQL process on this machine, by class (Linux; null elsewhere). */
export function cpuByProcessClass(): Map<string, number> | null {
  if (!existsSync("/proc/self/stat")) return null;
  const out = new Map<string, number>();
  for (const pid of readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
    try {
      const cmd = readFileSync(`/proc/${pid}/cmdline`, "utf8");
      const cls = cmd.includes(`${BIN}\0daemon`)
        ? "daemons"
        : /postgres/.test(cmd)
          ? "postgres"
          : cmd.includes(WORKER_FIXTURE)
            ? "workers"
            : undefined;
      if (!cls) continue;
      const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
      const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
      out.set(`${cls} ${pid}`, Number(f[11]) + Number(f[12]));
    } catch {
      // The process ended meanwhile.
    }
  }
  return out;
}

export function perTurn(
  before: Map<string, number> | null,
  after: Map<string, number> | null,
  turns: number,
): Record<string, number> | null {
  if (!before || !after) return null;
  const ms = 1000 / 100; // Linux reports CPU in clock ticks of 10 ms (USER_HZ 100).
  const sums: Record<string, number> = {};
  for (const [key, ticks] of after) {
    const cls = key.split(" ")[0]!;
    sums[cls] = (sums[cls] ?? 0) + ((ticks - (before.get(key) ?? 0)) * ms) / turns;
  }
  for (const k of Object.keys(sums)) sums[k] = Number(sums[k]!.toFixed(2));
  return sums;
}
