import WebSocket from "ws";
import { WORKER_PROTOCOL_VERSION, type DaemonAbort, type DaemonCall, type DaemonRecall } from "@wardrik/protocol";

/**
 * A worker that speaks the wire protocol by hand over a real WebSocket, for
 * what the SDK does not let a test do on purpose: drop the connection with a
 * call in hand, and answer it later on another connection. It never answers
 * a `recall` on its own, as an SDK older than that question would not; the
 * questions are kept, and a test may answer them.
 */
export interface RawWorker {
  /** Calls received on this connection. */
  calls: DaemonCall[];
  /** `recall` questions received on this connection. */
  recalls: DaemonRecall[];
  /** `abort` messages received on this connection. */
  aborts: DaemonAbort[];
  /** Answers a question as an SDK would (`finished` carries `output`). */
  answerRecall(
    ask: string,
    callId: string,
    answer: { state: "unknown" } | { state: "running"; attempt: number } | { state: "finished"; attempt: number; output: unknown },
  ): void;
  nextCall(): Promise<DaemonCall>;
  answer(callId: string, attempt: number, output: unknown): void;
  drop(): Promise<void>;
}

export async function connectRawWorker(
  url: string,
  token: string,
  tools: { name: string; readOnly?: boolean; idempotent?: boolean }[],
  instance = "raw-1",
): Promise<RawWorker> {
  const ws = new WebSocket(url.replace(/^http/, "ws") + "/v1/workers", { headers: { authorization: `Bearer ${token}` } });
  const calls: DaemonCall[] = [];
  const recalls: DaemonRecall[] = [];
  const aborts: DaemonAbort[] = [];
  const waiting: ((c: DaemonCall) => void)[] = [];
  let registered: () => void = () => undefined;
  const ready = new Promise<void>((resolve) => (registered = resolve));
  ws.on("message", (data) => {
    const parsed = JSON.parse(String(data)) as unknown;
    for (const m of (Array.isArray(parsed) ? parsed : [parsed]) as { type: string }[]) {
      if (m.type === "registered") registered();
      if (m.type === "ping") ws.send(JSON.stringify({ type: "pong" }));
      if (m.type === "recall") recalls.push(m as DaemonRecall);
      if (m.type === "abort") aborts.push(m as DaemonAbort);
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
  ws.send(JSON.stringify({ type: "hello", protocol: WORKER_PROTOCOL_VERSION, name: "raw", instance, sdk: "raw" }));
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
    recalls,
    aborts,
    answerRecall: (ask, callId, answer) =>
      ws.send(
        JSON.stringify(
          answer.state === "finished"
            ? { type: "recalled", ask, callId, state: "finished", attempt: answer.attempt, ok: true, output: answer.output }
            : { type: "recalled", ask, callId, ...answer },
        ),
      ),
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
