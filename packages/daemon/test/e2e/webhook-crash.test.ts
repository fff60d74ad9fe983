/**
 * The webhook outbox survives a crash: deliveries queued while the
 * subscriber is down are kept through kill -9 of the daemon, and after a
 * restart every one of them arrives, in the order of the agent's events.
 */
import { describe, expect, it } from "vitest";
import type { DeliveryPage } from "@wardrik/protocol";
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
});
