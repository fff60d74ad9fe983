/**
 * A fault daemon as the tests and benchmarks see it: its HTTP API, the
 * agent's events (read, or followed live), and waits on conditions. No
 * vitest here: the benchmarks use it too.
 */
import { waitFor } from "../helpers/wait.js";
import { AGENT } from "./fault-agent.js";

export interface FaultDaemon {
  readonly dir: string;
  readonly url: string;
  readonly token: string;
  /** The running daemon's pid, if one runs. */
  readonly pid: number | undefined;
  start(): Promise<void>;
  /** SIGKILL, then waits for the exit. */
  kill(): Promise<void>;
  /** Resolves once no daemon process runs (one killed by the worker, say). */
  waitForExit(timeoutMs?: number): Promise<void>;
}

export async function api<T = unknown>(d: Pick<FaultDaemon, "url" | "token">, method: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(d.url + path, {
    method,
    headers: { authorization: `Bearer ${d.token}`, ...(body !== undefined ? { "content-type": "application/json" } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path} answered ${res.status}: ${text}`);
  return (text ? JSON.parse(text) : undefined) as T;
}

export async function agentIdOf(d: FaultDaemon, name = AGENT): Promise<string> {
  const r = await api<{ agents: { id: string; name: string }[] }>(d, "GET", `/v1/agents?name=${encodeURIComponent(name)}`);
  const a = r.agents.find((x) => x.name === name);
  if (!a) throw new Error(`no agent ${name}`);
  return a.id;
}

export interface FaultEvent {
  seq: number;
  type: string;
  time: string;
  run?: string;
  subject?: string;
  data: Record<string, unknown>;
}

export function short(type: string): string {
  return type.startsWith("dev.wardrik.") ? type.slice("dev.wardrik.".length) : type;
}

/** Every event of the agent after `after`. */
export async function eventsOf(d: FaultDaemon, agentId: string, after = 0): Promise<FaultEvent[]> {
  const out: FaultEvent[] = [];
  for (;;) {
    const page = await api<{ events: FaultEvent[] }>(d, "GET", `/v1/agents/${agentId}/events?after=${after}&limit=1000`);
    out.push(...page.events);
    if (page.events.length < 1000) return out;
    after = page.events[page.events.length - 1]!.seq;
  }
}

/** `waitFor` with the fault kit's tighter defaults (20 s, every 25 ms). */
export function waitUntil<T>(
  fn: () => Promise<T | undefined | false> | T | undefined | false,
  what: string,
  timeoutMs = 20_000,
  everyMs = 25,
): Promise<T> {
  return waitFor(fn, what, timeoutMs, everyMs);
}

/** Follows the agent's live events (SSE) from `after`; `onEvent` returning true stops following. */
export function followEvents(
  d: FaultDaemon,
  agentId: string,
  after: number,
  onEvent: (e: FaultEvent) => boolean | void,
): { stop(): void; done: Promise<void> } {
  const controller = new AbortController();
  const done = (async () => {
    const res = await fetch(`${d.url}/v1/agents/${agentId}/events/stream?after=${after}`, {
      headers: { authorization: `Bearer ${d.token}`, accept: "text/event-stream" },
      signal: controller.signal,
    });
    if (!res.ok || !res.body) throw new Error(`event stream answered ${res.status}`);
    const reader = res.body.getReader();
    const decoder = new TextDecoder();
    let buf = "";
    try {
      for (;;) {
        const { done: end, value } = await reader.read();
        if (end) return;
        buf += decoder.decode(value, { stream: true }).replace(/\r\n/g, "\n");
        let cut: number;
        while ((cut = buf.indexOf("\n\n")) >= 0) {
          const block = buf.slice(0, cut);
          buf = buf.slice(cut + 2);
          let kind = "message";
          const data: string[] = [];
          for (const line of block.split("\n")) {
            if (line.startsWith("event:")) kind = line.slice(6).trim();
            else if (line.startsWith("data:")) data.push(line.slice(5).replace(/^ /, ""));
          }
          if (kind !== "event" || data.length === 0) continue;
          if (onEvent(JSON.parse(data.join("\n")) as FaultEvent) === true) return;
        }
      }
    } finally {
      await reader.cancel().catch(() => undefined);
    }
  })().catch((err: unknown) => {
    // The daemon dying under the stream is the point of these tests.
    if (
      !controller.signal.aborted &&
      !/terminated|socket|ECONNRESET|aborted/i.test(String((err as Error).message) + String((err as Error).cause))
    )
      throw err;
  });
  return { stop: () => controller.abort(), done };
}

export async function send(d: FaultDaemon, agentId: string, text: string, conversation = "main"): Promise<string> {
  const r = await api<{ message: string }>(d, "POST", `/v1/agents/${agentId}/messages`, { text, conversation });
  return r.message;
}
