import WebSocket from "ws";
import { WORKER_PROTOCOL_VERSION, type DaemonCall } from "@wardrik/protocol";

/**
 * A worker that speaks the wire protocol by hand over a real WebSocket, for
 * what the SDK does not let a test do on purpose: drop the connection with a
 * call in hand, and answer it later on another connection.
 */
export interface RawWorker {
  /** Calls received on this connection. */
  calls: DaemonCall[];
  nextCall(): Promise<DaemonCall>;
  answer(callId: string, attempt: number, output: unknown): void;
  drop(): Promise<void>;
}

export async function connectRawWorker(
  url: string,
  token: string,
  tools: { name: string; readOnly?: boolean; idempotent?: boolean }[],
): Promise<RawWorker> {
  const ws = new WebSocket(url.replace(/^http/, "ws") + "/v1/workers", { headers: { authorization: `Bearer ${token}` } });
  const calls: DaemonCall[] = [];
  const waiting: ((c: DaemonCall) => void)[] = [];
  let registered: () => void = () => undefined;
  const ready = new Promise<void>((resolve) => (registered = resolve));
  ws.on("message", (data) => {
    const parsed = JSON.parse(String(data)) as unknown;
    for (const m of (Array.isArray(parsed) ? parsed : [parsed]) as { type: string }[]) {
      if (m.type === "registered") registered();
      if (m.type === "ping") ws.send(JSON.stringify({ type: "pong" }));
      if (m.type === "call") {
        const call = m as DaemonCall;
        const w = waiting.shift();
        if (w) w(call);
        else calls.push(call);
      }
    }
  });
  await new Promise<void>((resolve, reject) => {
    ws.once("open", () => resolve());
    ws.once("error", reject);
  });
  ws.send(JSON.stringify({ type: "hello", protocol: WORKER_PROTOCOL_VERSION, name: "raw", instance: "raw-1", sdk: "raw" }));
  ws.send(
    JSON.stringify({
      type: "register",
      tools: tools.map((t) => ({
        name: t.name,
        description: `raw ${t.name}`,
        inputSchema: { type: "object" },
        readOnly: t.readOnly ?? false,
        idempotent: t.idempotent ?? false,
      })),
    }),
  );
  await ready;
  return {
    calls,
    nextCall: () => {
      const c = calls.shift();
      return c ? Promise.resolve(c) : new Promise((resolve) => waiting.push(resolve));
    },
    answer: (callId, attempt, output) => ws.send(JSON.stringify({ type: "result", callId, attempt, ok: true, output })),
    drop: () =>
      new Promise((resolve) => {
        ws.once("close", () => resolve());
        ws.terminate();
      }),
  };
}
