/** The largest result a worker may return (just under 1 MiB of JSON), stored and given to the model each pass. */
import WebSocket from "ws";
import { WORKER_PROTOCOL_VERSION } from "@wardrik/protocol";
import { count, type HostileTally, type IsolationKind } from "../isolation-kit.js";

/** 20,000 rows of 48 characters: about 1,000,000 bytes of JSON. */
const OUTPUT = { rows: Array.from({ length: 20_000 }, (_, i) => `row ${String(i).padStart(6, "0")} ${"x".repeat(37)}`) };
let worker: WebSocket | undefined;

/** A worker serving `big`, speaking the wire protocol by hand; kept open across passes. */
async function connect(url: string, token: string): Promise<WebSocket> {
  const ws = new WebSocket(url.replace(/^http/, "ws") + "/v1/workers", { headers: { authorization: `Bearer ${token}` } });
  let registered: () => void = () => undefined;
  const ready = new Promise<void>((resolve) => (registered = resolve));
  ws.on("message", (data) => {
    const parsed = JSON.parse(String(data)) as unknown;
    for (const m of (Array.isArray(parsed) ? parsed : [parsed]) as { type: string; callId?: string; attempt?: number }[]) {
      if (m.type === "registered") registered();
      if (m.type === "ping") ws.send(JSON.stringify({ type: "pong" }));
      if (m.type === "call") ws.send(JSON.stringify({ type: "result", callId: m.callId, attempt: m.attempt, ok: true, output: OUTPUT }));
    }
  });
  await new Promise<void>((resolve, reject) => {
    ws.once("open", () => resolve());
    ws.once("error", reject);
  });
  ws.send(JSON.stringify({ type: "hello", protocol: WORKER_PROTOCOL_VERSION, name: "big", instance: "big-1", sdk: "bench" }));
  const tool = { name: "big", description: "A large result", inputSchema: { type: "object" }, readOnly: true, idempotent: true };
  ws.send(JSON.stringify({ type: "register", tools: [tool] }));
  await ready;
  return ws;
}

export const kind: IsolationKind = {
  name: "large-worker-result",
  hostile: "a worker tool returning about 1 MB of JSON (just under the 1 MiB result limit), in a turn each pass",
  prepare: (draft) => {
    draft.models.fetch_big = "{ provider: script, model: fetch_big }";
    draft.files["scripts/fetch_big.yaml"] = "steps:\n  - tool_calls:\n      - tool: workers/big\n  - text: done\n";
    draft.files["policies/open.yaml"] = 'description: Everything runs.\nrules:\n  - tool: "*"\n    decision: allow\n';
    draft.files["agents/fetcher.md"] =
      "---\ndescription: Fetches big results\nmodel: fetch_big\ntools: [workers/*]\npolicy: open\n---\nYou fetch.\n";
  },
  attack: async (d) => {
    const tally: HostileTally = {};
    worker ??= await connect(d.url, d.token);
    const id = await d.agentId("fetcher");
    const res = await fetch(`${d.url}/v1/agents/${id}/messages`, {
      method: "POST",
      headers: { authorization: `Bearer ${d.token}`, "content-type": "application/json" },
      body: JSON.stringify({ text: "fetch", conversation: `c${Date.now()}` }),
    });
    const { message } = (await res.json()) as { message: string };
    count(tally, `turn_${(await d.turnEnd(id, message)).type.split(".").pop()!}`);
    return tally;
  },
  close: () => worker?.terminate(),
};
