/**
 * The webhook outbox survives a crash: deliveries queued while the
 * subscriber is down are kept through kill -9 of the daemon, and after a
 * restart every one of them arrives, in the order of the agent's events. A
 * delivery whose request reached the subscriber but whose answer the daemon
 * never stored (the receiver kills the daemon before it answers) is sent
 * again with the same webhook-id, so a receiver that drops repeats acts once,
 * and the repeat is counted on the delivery and in the metrics.
 */
import { randomBytes } from "node:crypto";
import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import type { DeliveryPage } from "@wardrik/protocol";
import { parsePrometheusText, sampleValue } from "../helpers/prometheus-text.js";
import { agentFile, createProject, freePort, waitFor } from "../helpers/spawn-daemon.js";
import { startReceiver } from "../helpers/webhook-receiver.js";

describe("webhook outbox across a crash", () => {
  it("kill -9 with deliveries pending loses none, and they arrive in order after the restart", async () => {
    // Nothing listens on this port yet: every attempt fails and the deliveries wait.
    const port = await freePort();
    const p = await createProject({
      config: (text) =>
        `${text.replace(/\n?$/, "\n")}subscribers:\n  - url: http://127.0.0.1:${port}/events\n    agents: [echoer]\n    timeout: 1\n`,
      files: { "agents/echoer.md": agentFile({ description: "Echoes", model: "script/echo" }) },
    });
    for (let i = 0; i < 3; i++) await p.send("echoer", `before the crash ${i}`);
    const events = await p.events("echoer");
    const page = await waitFor(async () => {
      const r = await p.apiOk<DeliveryPage>("GET", "/v1/deliveries?limit=1000");
      return r.deliveries.length === events.length && r.deliveries.some((d) => d.attempts > 0) ? r : undefined;
    }, "a delivery per event, tried at least once");
    expect(page.deliveries.every((d) => d.status === "pending")).toBe(true);

    const killed = await p.kill();
    expect(killed.signal).toBe("SIGKILL");
    const receiver = await startReceiver({ port });
    await p.start();

    const seqs = events.map((e) => e.seq);
    await waitFor(() => receiver.accepted().length >= seqs.length || undefined, "every delivery after the restart", 60_000);
    expect(receiver.accepted().map((r) => r.json.seq)).toEqual(seqs);
    expect(receiver.accepted().map((r) => r.json.id)).toEqual(events.map((e) => e.id));
    const after = await waitFor(async () => {
      const r = await p.apiOk<DeliveryPage>("GET", "/v1/deliveries?status=delivered&limit=1000");
      return r.deliveries.length === seqs.length ? r : undefined;
    }, "every delivery recorded as delivered");
    expect(after.deliveries.every((d) => d.attempt_log.at(-1)?.status === 200)).toBe(true);
  });

  it("kill -9 between a delivery's request and storing its answer: sent again with the same webhook-id, counted as a possible repeat", async () => {
    const secret = `whsec_${randomBytes(32).toString("base64")}`;
    const receiver = await startReceiver();
    const p = await createProject({
      config: (text) =>
        // timeout 3: on PostgreSQL the dead node's claim lapses after the subscriber's timeout and a margin (10 s by default).
        `${text.replace(/\n?$/, "\n")}subscribers:\n  - url: ${receiver.url}\n    agents: [echoer]\n    types: [turn.completed]\n    secret: ${secret}\n    timeout: 3\n`,
      files: { "agents/echoer.md": agentFile({ description: "Echoes", model: "script/echo" }) },
    });
    // The subscriber has the request, then the daemon dies before its answer: the request's outcome is lost with it.
    const pid = p.child!.pid!;
    receiver.respond = (_req, i) => {
      if (i > 0) return { status: 200 };
      process.kill(pid, "SIGKILL");
      return "hang";
    };
    await p.api("POST", `/v1/agents/${await p.agentId("echoer")}/messages`, { text: "once" });
    await waitFor(() => p.child === undefined, "the receiver to kill the daemon", 60_000);
    await p.start();
    await waitFor(() => receiver.accepted().length >= 1 || undefined, "the delivery sent again after the restart", 60_000);

    const [first, again] = receiver.requests;
    expect(again!.headers["webhook-id"]).toBe(first!.headers["webhook-id"]);
    // Signed afresh (a new timestamp), and valid: a Standard Webhooks receiver takes it, sees the id it had, and drops it.
    expect(() => new Webhook(secret).verify(again!.body, again!.headers as Record<string, string>)).not.toThrow();
    expect(new Set(receiver.requests.map((r) => r.headers["webhook-id"])).size).toBe(1);
    const delivered = await waitFor(async () => {
      const r = await p.apiOk<DeliveryPage>("GET", "/v1/deliveries?status=delivered");
      return r.deliveries.length === 1 ? r.deliveries[0] : undefined;
    }, "the delivery recorded as delivered");
    expect(delivered.event).toBe(first!.headers["webhook-id"]);
    expect(delivered.possible_repeats).toBe(1);
    const metrics = parsePrometheusText((await p.api("GET", "/metrics")).text);
    expect(sampleValue(metrics, "wardrik_possible_repeats_total", { effect: "webhook_delivery" })).toBe(1);
  });
});
