/**
 * Webhook subscribers of config.yaml: matching events are POSTed as signed
 * CloudEvents (checked with the independent `standardwebhooks` package),
 * failed attempts are retried with backoff and Retry-After, each agent's
 * events reach a subscriber in order, a delivery past its retry window is a
 * dead letter that `wardrik deliveries retry` sends again, and a subscriber
 * that never answers does not hold up turns. Real daemon, real receivers.
 */
import { randomBytes } from "node:crypto";
import { Webhook } from "standardwebhooks";
import { beforeAll, describe, expect, it } from "vitest";
import type { DeliveryView } from "@wardrik/protocol";
import { agentFile, createProject, short, waitFor, type TestProject } from "../helpers/spawn-daemon.js";
import { startReceiver, type Receiver } from "../helpers/webhook-receiver.js";

const SECRET = `whsec_${randomBytes(32).toString("base64")}`;

let p: TestProject;
let signed: Receiver;
let retrying: Receiver;
let ordered: Receiver;
let dead: Receiver;
let silent: Receiver;

const echo = (description: string) => agentFile({ description, model: "script/echo" });

/** The deliveries through the API: waits poll this, a CLI process per look would cost a node start each time. */
async function deliveries(status?: "pending" | "failed"): Promise<DeliveryView[]> {
  return (await p.apiOk<{ deliveries: DeliveryView[] }>("GET", `/v1/deliveries?limit=1000${status ? `&status=${status}` : ""}`)).deliveries;
}

/** The same list as `wardrik deliveries --json` prints it. */
async function cliDeliveries(args: string[] = []): Promise<DeliveryView[]> {
  const r = await p.cli(["deliveries", "--json", "--limit", "1000", ...args]);
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as DeliveryView[];
}

beforeAll(async () => {
  signed = await startReceiver();
  retrying = await startReceiver({
    // The first attempt asks to wait 2 s, the second fails plainly, the third is taken.
    respond: (_req, i) =>
      i === 0 ? { status: 503, headers: { "retry-after": "2" } } : i === 1 ? { status: 500, body: "busy" } : { status: 200 },
  });
  // Every third request fails: retries interleave with new events, and order must hold anyway.
  ordered = await startReceiver({ respond: (_req, i) => (i % 3 === 0 ? { status: 502 } : { status: 204 }) });
  dead = await startReceiver({ respond: () => ({ status: 500, body: "down for maintenance" }) });
  silent = await startReceiver({ respond: () => "hang" });
  const subscribers = `subscribers:
  - url: ${signed.url}
    types: [turn.completed, "agent.*"]
    agents: [echoer]
    secret: \${secret:OPS_HOOK}
  - url: ${retrying.url}
    types: [turn.completed]
    agents: [retrier]
  - url: ${ordered.url}
    agents: [orderly]
  - url: ${dead.url}
    types: [turn.completed]
    agents: [doomed]
    retry_for: 2
  - url: ${silent.url}
    agents: [busy]
    timeout: 60
`;
  p = await createProject({
    start: false,
    config: (text) => `${text.replace(/\n?$/, "\n")}${subscribers}`,
    // Due retries are looked for every 100 ms, not every second.
    env: { WARDRIK_DELIVERY_POLL_MS: "100" },
    files: {
      "agents/echoer.md": echo("Echoes"),
      "agents/retrier.md": echo("Retried"),
      "agents/orderly.md": echo("Ordered"),
      "agents/doomed.md": echo("Dead letters"),
      "agents/busy.md": echo("Busy"),
    },
  });
  const set = await p.cli(["secret", "set", "OPS_HOOK"], { input: SECRET });
  expect(set.code, set.stderr).toBe(0);
  await p.start();
});

// Each test has its own agent and receiver on the shared daemon, and most of their time is waiting on retries: they run side by side.
describe.concurrent("webhook subscribers", () => {
  it("POSTs each matching event as a CloudEvent signed as Standard Webhooks specifies, and nothing else", async () => {
    const echoer = await p.agentId("echoer");
    await p.send("echoer", "hello subscribers");
    await p.send("helper", "not for any subscriber");
    const turn = await waitFor(
      () => signed.accepted().find((r) => short(r.json.type) === "turn.completed"),
      "turn.completed at the receiver",
    );

    const wh = new Webhook(SECRET);
    for (const r of signed.requests) {
      // Throws unless webhook-id, webhook-timestamp and webhook-signature sign the body with the secret.
      expect(() => wh.verify(r.body, r.headers as Record<string, string>)).not.toThrow();
      expect(r.headers["content-type"]).toBe("application/cloudevents+json");
      expect(r.headers["webhook-id"]).toBe(r.json.id);
    }
    expect(() =>
      new Webhook(`whsec_${randomBytes(32).toString("base64")}`).verify(turn.body, turn.headers as Record<string, string>),
    ).toThrow();

    expect(turn.json).toMatchObject({
      specversion: "1.0",
      type: "dev.wardrik.turn.completed",
      source: `/orgs/default/agents/${echoer}`,
      data: { reply: "You said: hello subscribers" },
    });
    expect(turn.json.id).toMatch(/^evt_/);
    expect(turn.json).not.toHaveProperty("agent");
    // Only echoer's events, only the types asked for: agent.loaded at start, then the turn's end.
    expect(signed.accepted().map((r) => short(r.json.type))).toEqual(["agent.loaded", "turn.completed"]);
    expect(new Set(signed.requests.map((r) => r.json.source))).toEqual(new Set([`/orgs/default/agents/${echoer}`]));
  });

  it("retries a failing receiver with backoff, waiting as long as its Retry-After asks", async () => {
    await p.send("retrier", "try until it works");
    await waitFor(() => retrying.accepted().length === 1 || undefined, "the third attempt to be accepted", 30_000);
    const [first, second, third] = retrying.requests;
    expect(retrying.requests).toHaveLength(3);
    // The same event every time, under the same webhook-id.
    expect(new Set(retrying.requests.map((r) => r.headers["webhook-id"])).size).toBe(1);
    expect(second!.at - first!.at).toBeGreaterThanOrEqual(1900);
    expect(third!.at).toBeGreaterThan(second!.at);

    const mine = await waitFor(
      async () => (await deliveries()).find((d) => d.subscriber === retrying.url && d.status === "delivered"),
      "the delivery to be recorded",
    );
    expect(mine.attempts).toBe(3);
    expect(mine.attempt_log.map((a) => a.status)).toEqual([503, 500, 200]);
    expect(mine.attempt_log[1]!.error).toBe("HTTP 500: busy");
    expect((await cliDeliveries()).find((d) => d.id === mine.id)).toEqual(mine);

    const text = await p.cli(["deliveries"]);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toContain(`${mine.id}  delivered turn.completed #${mine.seq} of retrier -> ${retrying.url}  (3 attempts`);
    expect(text.stdout).toMatch(/#1 \S+ HTTP 503 in \d+ ms/);
  });

  it("keeps each agent's events in order for a subscriber, through failures and retries", async () => {
    for (let i = 0; i < 4; i++) await p.send("orderly", `message ${i}`);
    const events = await p.events("orderly");
    const last = events.at(-1)!.seq;
    await waitFor(() => ordered.accepted().some((r) => r.json.seq === last) || undefined, "the last event at the receiver", 60_000);
    // Never a later event before an earlier one is accepted: arrival order never goes back.
    const arrived = ordered.requests.map((r) => r.json.seq);
    expect(arrived).toEqual([...arrived].sort((a, b) => a - b));
    expect(ordered.accepted().map((r) => r.json.seq)).toEqual(events.map((e) => e.seq));
    expect(ordered.requests.some((r) => r.status === 502)).toBe(true);
  });

  it("dead-letters a delivery after its retry window; deliveries retry sends it again", async () => {
    await p.send("doomed", "nobody will take this");
    const failed = await waitFor(async () => (await deliveries("failed")).find((d) => d.subscriber === dead.url), "a dead letter", 30_000);
    expect(failed.status).toBe("failed");
    expect(failed.attempts).toBeGreaterThanOrEqual(2);
    expect(failed.last_error).toBe("HTTP 500: down for maintenance");
    const listed = await p.cli(["deliveries", "--failed"]);
    expect(listed.stdout).toContain(failed.id);

    dead.respond = () => ({ status: 200 });
    const retry = await p.cli(["deliveries", "retry", failed.id]);
    expect(retry.code, retry.stderr).toBe(0);
    expect(retry.stdout).toContain(`Queued ${failed.id}`);
    const done = await waitFor(async () => {
      const d = (await deliveries()).find((x) => x.id === failed.id);
      return d?.status === "delivered" ? d : undefined;
    }, "the retried delivery to be delivered");
    expect(done.attempt_log.at(-1)!.status).toBe(200);
    expect((await cliDeliveries(["--failed"])).some((d) => d.id === failed.id)).toBe(false);

    // The same through the API; an unknown ID is a 404 that says where to look.
    const again = await p.api<DeliveryView>("POST", `/v1/deliveries/${failed.id}/retry`, {});
    expect(again.status).toBe(200);
    expect(again.json.status).toBe("pending");
    const unknown = await p.api("POST", "/v1/deliveries/dlv_01JF8X5RQ2M3V9ZK0B7Y4T6WHN/retry", {});
    expect(unknown.status).toBe(404);
    expect(unknown.text).toContain("wardrik deliveries");
  });

  it("a subscriber that never answers does not hold up turns", async () => {
    for (let i = 0; i < 3; i++) {
      const { end } = await p.send("busy", `turn ${i}`);
      expect(short(end.type)).toBe("turn.completed");
    }
    // The first delivery still waits for its answer; the rest queue behind it, in order.
    expect(silent.requests.length).toBe(1);
    expect(silent.requests[0]!.status).toBeUndefined();
    const pending = (await cliDeliveries(["--pending"])).filter((d) => d.subscriber === silent.url);
    expect(pending.length).toBeGreaterThanOrEqual(15);
  });

  it("another org's token sees none of these deliveries", async () => {
    const made = await p.cli(["token", "other", "--json"]);
    expect(made.code, made.stderr).toBe(0);
    const token = (JSON.parse(made.stdout) as { token: string }).token;
    const r = await p.api<{ deliveries: unknown[] }>("GET", "/v1/deliveries", undefined, { token });
    expect(r.status).toBe(200);
    expect(r.json.deliveries).toEqual([]);
  });
});
