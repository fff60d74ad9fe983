/**
 * Every tool example of the seed pages registers with a daemon (here a
 * loopback server speaking the worker protocol) and answers a call; the one
 * without a description reaches the model with its name instead.
 */
import { afterEach, expect, test } from "vitest";
import type { WorkerMessage } from "@wardrik/protocol";
import { Wardrik } from "../src/index.js";
import { protocolServer, until, type ProtocolServer } from "./helpers/protocol-server.js";
import { seedExamples } from "./seed-examples/examples.js";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const ARGS: Record<string, unknown> = {
  refund_order: { orderId: "pi_123" },
  find_order: { payment_intent: "pi_123" },
  get_order: { order_id: "ord_1234" },
  my_orders: {},
  enrich_contact: { email: "a@example.com" },
};

test.each(seedExamples.map((e) => [`${e.page} / ${e.section}: ${e.tool}`, e] as const))(
  "%s registers and answers",
  async (_title, example) => {
    const daemon: ProtocolServer = await protocolServer();
    cleanups.push(() => daemon.stop());
    const warnings: string[] = [];
    const wardrik = new Wardrik({ url: daemon.url, token: "t", onWarning: (m) => warnings.push(m) });
    cleanups.push(() => wardrik.close());
    example.register(wardrik);
    const listening = wardrik.listen();
    await until(() => daemon.connections[0]?.received.some((m) => m.type === "register") ?? false, "register");
    const conn = daemon.connections[0]!;
    const register = conn.received.find((m) => m.type === "register") as Extract<WorkerMessage, { type: "register" }>;
    expect(register.tools.map((t) => t.name)).toEqual([example.tool]);
    const description = register.tools[0]!.description;
    expect(description.length).toBeGreaterThan(0);
    if (example.page === "Agents") expect(description).toBe("refund_order");

    conn.call({ callId: "call_1", tool: example.tool, args: ARGS[example.tool] });
    await until(() => conn.received.some((m) => m.type === "result"), "the result");
    const result = conn.received.find((m) => m.type === "result");
    expect(result).toMatchObject({ callId: "call_1", ok: true });
    if (example.tool === "enrich_contact")
      expect(conn.received.find((m) => m.type === "cost")).toEqual({ type: "cost", callId: "call_1", usd: 0.01 });
    expect(warnings).toEqual([]);
    expect(daemon.invalid).toEqual([]);
    await wardrik.close();
    await listening;
  },
);
