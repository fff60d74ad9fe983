/**
 * What the `isolation` benchmark's kinds share: the shape of a kind, the
 * daemon they attack, the prober that measures another org meanwhile, and the
 * hostile payloads. A kind is one file in bench/isolation/ exporting `kind`;
 * the runner (isolation.ts) finds them there, so adding one touches no other file.
 */
import { spawn } from "node:child_process";
import type { BenchDaemon } from "./daemon-kit.js";

/** The project, before the daemon starts: what the kinds add to it. */
export interface ProjectDraft {
  /** Files relative to the project (agents/, scripts/, policies/). */
  files: Record<string, string>;
  /** `models:` entries: name -> a YAML flow mapping such as `{ provider: script, model: NAME }`. */
  models: Record<string, string>;
  /** Top-level YAML blocks appended to config.yaml (`slack:`, `mcp:`). */
  config: string[];
}

/** The running daemon as the kinds see it: the hostile client acts as org `default` (the admin token). */
export interface IsolationDaemon {
  url: string;
  /** The admin token of org `default`, whose agents and workers the hostile client uses. */
  token: string;
  agentId(name: string): Promise<string>;
  /** Resolves with the event that ended turn `run` of the agent (polls its events). */
  turnEnd(agentId: string, message: string): Promise<{ type: string }>;
}

/** What one pass of a hostile client saw: counts by outcome (`status_400`, `closed_1008`, `turns_completed`, ...). */
export type HostileTally = Record<string, number>;

export interface IsolationKind {
  name: string;
  /** One line for the report: what the hostile client sends. */
  hostile: string;
  /** Adds the agents, models and config the kind needs; may start servers (a loopback model). */
  prepare?(draft: ProjectDraft): Promise<void> | void;
  /** One pass of the hostile client; the runner repeats it while the prober measures. */
  attack(d: IsolationDaemon): Promise<HostileTally>;
  /** Stops what `prepare` started. */
  close?(): Promise<void> | void;
}

/** 2,000,000 bytes of balanced brackets: a million levels of valid JSON, just under the 2 MiB body limit. */
export const NESTED_BRACKETS = "[".repeat(1_000_000) + "]".repeat(1_000_000);
/** 300,000 levels of `{"a":...}` (1.8 MB), as in the report that a worker's result could crash the daemon. */
export const NESTED_OBJECTS = '{"a":'.repeat(300_000) + "1" + "}".repeat(300_000);

/** The hostile org's agent that messages are sent to (kinds that need it add it; the same file either way). */
export function addTargetAgent(draft: ProjectDraft): void {
  draft.files["agents/target.md"] = "---\ndescription: The hostile org's agent\nmodel: bench\n---\nYou answer.\n";
}

/** POSTs `body` as is to the messages of agent `target`, as org `default`. */
export async function postToTarget(tally: HostileTally, d: IsolationDaemon, body: string): Promise<HostileTally> {
  const id = await d.agentId("target");
  await post(tally, `${d.url}/v1/agents/${id}/messages`, body, { authorization: `Bearer ${d.token}`, "content-type": "application/json" });
  return tally;
}

/** Adds one to `key` of the tally. */
export function count(tally: HostileTally, key: string): HostileTally {
  tally[key] = (tally[key] ?? 0) + 1;
  return tally;
}

/** A POST with a body as is; the answer's status counted as `status_NNN` (a failed connection as `error`). */
export async function post(tally: HostileTally, url: string, body: string | Uint8Array, headers: Record<string, string>): Promise<void> {
  try {
    const res = await fetch(url, { method: "POST", headers, body });
    await res.arrayBuffer();
    count(tally, `status_${res.status}`);
  } catch {
    count(tally, "error");
  }
}

// Another org's traffic, from a process of its own (so the hostile client's own work cannot delay it):
// GET /v1/agents in a loop with a short pause, each request's latency in ms printed on stop.
const PROBER_SOURCE = `
const { PROBE_URL: url, PROBE_TOKEN: token } = process.env;
const latencies = [];
let running = true;
process.stdin.on("data", () => (running = false));
(async () => {
  process.stdout.write("ready\\n");
  while (running) {
    const t0 = performance.now();
    try {
      const res = await fetch(url + "/v1/agents", { headers: { authorization: "Bearer " + token } });
      await res.text();
      latencies.push(res.status === 200 ? performance.now() - t0 : -1);
    } catch {
      latencies.push(-1);
    }
    await new Promise((r) => setTimeout(r, 10));
  }
  process.stdout.write(JSON.stringify(latencies) + "\\n");
})();
`;

export interface Prober {
  /** Stops the loop; resolves with every latency in ms (-1 for a request that failed or was not answered 200). */
  stop(): Promise<number[]>;
}

/** Starts another org's GET /v1/agents loop; resolves once it runs. */
export async function startProber(d: BenchDaemon, token: string): Promise<Prober> {
  const env: NodeJS.ProcessEnv = { ...process.env, PROBE_URL: d.url, PROBE_TOKEN: token };
  delete env.NODE_OPTIONS;
  const child = spawn(process.execPath, ["-e", PROBER_SOURCE], { env, stdio: ["pipe", "pipe", "inherit"] });
  let out = "";
  const lines: ((line: string) => void)[] = [];
  child.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
    out += chunk;
    for (let i = out.indexOf("\n"); i >= 0; i = out.indexOf("\n")) {
      const line = out.slice(0, i);
      out = out.slice(i + 1);
      lines.shift()?.(line);
    }
  });
  const nextLine = () => new Promise<string>((resolve) => lines.push(resolve));
  await nextLine();
  return {
    stop: async () => {
      const result = nextLine();
      child.stdin!.end("stop\n");
      return JSON.parse(await result) as number[];
    },
  };
}
