/**
 * `npm run bench -- tools`: one worker process (the SDK) serving a read-only
 * tool that returns at once; 10,000 calls through the gateway, 64 in flight,
 * then 2,000 calls one at a time. Prints one JSON line: calls per second and
 * p50/p99 latency from dispatch to result (64 in flight), the CPU a call of the
 * gateway's process and of the worker process (64 in flight), and p50/p99 at 1 in flight.
 *
 * Runs from built JavaScript (bench/dist): this file re-runs itself, once as
 * the daemon side, once as the worker.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { once } from "node:events";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import type { ToolCallContext } from "wardrik";
import { procCpuMs } from "./daemon-kit.js";

const CALLS = Number(process.env.WARDRIK_BENCH_CALLS ?? 10_000);
const WARMUP = 5_000;
const IN_FLIGHT = 64;
const SINGLE = 2_000;
const TOKEN = "bench-token";
const self = fileURLToPath(import.meta.url);
const role = process.argv[2];
// WARDRIK_BENCH_TOOLS_SIGNAL=1: each call carries only an AbortSignal (a caller without a stop watch, as before #32).
const SIGNAL_ONLY = process.env.WARDRIK_BENCH_TOOLS_SIGNAL === "1";

function relaunch(args: string[], env: Record<string, string> = {}): ChildProcess {
  // WARDRIK_BENCH_NODE_FLAGS="--cpu-prof --cpu-prof-dir=prof" profiles both processes.
  const flags = process.env.WARDRIK_BENCH_NODE_FLAGS?.split(" ").filter(Boolean) ?? [];
  return spawn(process.execPath, [...flags, self, ...args], {
    // stdin is a lifeline: the child exits when its parent dies.
    stdio: ["pipe", "inherit", "inherit"],
    env: { ...process.env, ...env },
  });
}

if (role !== undefined) {
  process.stdin
    .on("end", () => process.exit(1))
    .resume()
    .unref();
}

if (role === undefined) {
  const child = relaunch(["daemon"]);
  const [code] = (await once(child, "exit")) as [number | null];
  process.exit(code ?? 1);
} else if (role === "worker") {
  // Dynamic imports: the worker side never loads daemon code.
  const { z } = await import("zod");
  const { Wardrik } = await import("@wardrik/sdk");
  const wardrik = new Wardrik({ name: "bench", onWarning: (m) => process.stderr.write(m + "\n") });
  wardrik.tool({
    name: "ping",
    description: "Answers at once.",
    input: z.object({ n: z.number() }),
    readOnly: true,
    run: ({ n }) => ({ n }),
  });
  process.on("SIGTERM", () => void wardrik.close());
  await wardrik.listen();
} else {
  const { createServer } = await import("node:http");
  const { CallStopper, WorkerGateway, ulidIds, withStopSignal } = await import("wardrik");
  const gateway = new WorkerGateway({ authenticate: (t) => Promise.resolve(t === TOKEN ? { org: "bench" } : undefined) });
  const server = createServer();
  server.on("upgrade", (req, socket, head) => gateway.handleUpgrade(req, socket, head));
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  const worker = relaunch(["worker"], { WARDRIK_URL: `http://127.0.0.1:${port}`, WARDRIK_TOKEN: TOKEN });
  if (!(await gateway.waitForTool("bench", "ping", 30_000))) throw new Error("the bench worker did not register");

  // IDs as the runtime makes them: ULIDs with their prefix (31 characters), and a first attempt's idempotency key is
  // its call's ID. Short made-up ones such as call_1 measured something else: V8's JSON.parse internalizes strings
  // that short, which changes what parsing them and looking them up costs.
  const ids = ulidIds();
  const agent = ids.next("agent");
  const runId = ids.next("run");
  let seq = 0;
  const call = async (): Promise<number> => {
    seq += 1;
    const callId = ids.next("call");
    const idempotencyKey = callId;
    // Each call's context as the runtime makes it (invoke-tool.ts, a literal): its AbortSignal only if a toolset reads it.
    const ctx: ToolCallContext = SIGNAL_ONLY
      ? {
          agent,
          org: "bench",
          run: runId,
          callId,
          idempotencyKey,
          attempt: 1,
          signal: new AbortController().signal,
          timeoutMs: 60_000,
          cost: () => {},
        }
      : withStopSignal({
          agent,
          org: "bench",
          run: runId,
          callId,
          idempotencyKey,
          attempt: 1,
          stop: new CallStopper(),
          timeoutMs: 60_000,
          cost: () => {},
        });
    const start = performance.now();
    const outcome = await gateway.call("ping", { n: seq }, ctx);
    if (!outcome.ok) throw new Error(`call failed: ${outcome.error}`);
    return performance.now() - start;
  };
  const run = async (count: number, inFlight = IN_FLIGHT): Promise<Float64Array> => {
    // Preallocated so recording latencies does not feed the garbage collector being measured.
    const latencies = new Float64Array(count);
    let started = 0;
    const lane = async (): Promise<void> => {
      while (started < count) {
        const i = started++;
        latencies[i] = await call();
      }
    };
    await Promise.all(Array.from({ length: inFlight }, lane));
    return latencies;
  };

  await run(WARMUP);
  const workerCpu0 = procCpuMs(worker.pid!);
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const latencies = await run(CALLS);
  const seconds = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpu0);
  const workerCpuMs = procCpuMs(worker.pid!) - workerCpu0;
  const single = await run(SINGLE, 1);
  latencies.sort();
  single.sort();
  const pct = (p: number, xs = latencies): number => Number(xs[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))]!.toFixed(3));
  console.log(
    JSON.stringify({
      workload: "tools",
      ...(SIGNAL_ONLY ? { caller: "signal-only" } : {}),
      calls: CALLS,
      seconds: Number(seconds.toFixed(3)),
      calls_per_s: Math.round(CALLS / seconds),
      // CPU a call on each side (64 in flight): what bounds calls/s when the machine is shared.
      daemon_cpu_us_per_call: Number(((cpu.user + cpu.system) / CALLS).toFixed(1)),
      worker_cpu_us_per_call: Number(((workerCpuMs * 1000) / CALLS).toFixed(1)),
      p50_ms: pct(50),
      p99_ms: pct(99),
      p50_1_in_flight_ms: pct(50, single),
      p99_1_in_flight_ms: pct(99, single),
    }),
  );
  worker.kill("SIGTERM");
  await once(worker, "exit");
  await gateway.close();
  server.close();
}
