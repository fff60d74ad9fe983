/** A worker's result frame holding an object nested 300,000 deep (1.8 MB), from a fresh connection each pass. */
import WebSocket from "ws";
import { WORKER_PROTOCOL_VERSION } from "@wardrik/protocol";
import { NESTED_OBJECTS, count, type HostileTally, type IsolationKind } from "../isolation-kit.js";

const frame = `{"type":"result","callId":"call_none","attempt":1,"ok":true,"output":${NESTED_OBJECTS}}`;

export const kind: IsolationKind = {
  name: "nested-worker",
  hostile: "a worker result frame nested 300,000 deep (1.8 MB)",
  attack: async (d) => {
    const tally: HostileTally = {};
    const ws = new WebSocket(d.url.replace(/^http/, "ws") + "/v1/workers", { headers: { authorization: `Bearer ${d.token}` } });
    const closed = new Promise<number>((resolve) => ws.once("close", (code) => resolve(code)));
    ws.on("error", () => undefined);
    await new Promise<void>((resolve) => ws.once("open", () => resolve()));
    ws.send(JSON.stringify({ type: "hello", protocol: WORKER_PROTOCOL_VERSION, name: "hostile", instance: "h-1", sdk: "bench" }));
    ws.send(frame);
    count(tally, `closed_${await closed}`);
    return tally;
  },
};
