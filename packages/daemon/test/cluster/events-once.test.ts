/**
 * Events out and in, on a cluster: two real daemons on one PostgreSQL
 * database. Each webhook delivery reaches its subscriber once (not once per
 * node), a 1-second schedule fires once a second (not once per node), an
 * inbound webhook or another agent's event fires once whichever node takes
 * it, and a delivery claimed by a node that dies is sent by another once the
 * claim expires. PostgreSQL only: a SQLite file has one daemon.
 */
import { randomBytes } from "node:crypto";
import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import type { NodeList } from "@wardrik/protocol";
import { agentFile, createProject, short, sleep, waitFor, type TestProject } from "../helpers/spawn-daemon.js";
import { startReceiver, type Receiver } from "../helpers/webhook-receiver.js";

const HOOK_SECRET = `whsec_${randomBytes(32).toString("base64")}`;
/** The nodes of a cluster share the key that seals the secrets in the database. */
const KEY = { WARDRIK_SECRET_KEY: randomBytes(32).toString("base64") };
/** The daemons look for due deliveries and firings (another node's, lapsed ones) every 100 ms, not every second. */
const DAEMON_ENV = { ...KEY, WARDRIK_DELIVERY_POLL_MS: "100", WARDRIK_FIRING_POLL_MS: "100" };

const subscriberOf = (r: Receiver, timeout = 5) => `subscribers:\n  - url: ${r.url}\n    agents: [echoer]\n    timeout: ${timeout}\n`;

const FILES = {
  "agents/echoer.md": agentFile({ description: "Echoes", model: "script/echo" }),
  "agents/ticker.md": agentFile({
    description: "Ticks",
    model: "script/echo",
    idle_timeout: "infinity",
    triggers: [{ schedule: "* * * * * *", message: "tick {{time}}", conversation: "ticks" }],
  }),
  "agents/listener.md": agentFile({
    description: "Listens",
    model: "script/echo",
    idle_timeout: "infinity",
    triggers: [
      { webhook: "deploy", secret: "${secret:DEPLOY_HOOK}", message: "deployed {{service}}" },
      { event: { agent: "echoer", types: ["turn.completed"] }, message: "echoer said {{data.reply}}" },
    ],
  }),
};

/** A second node of `first`'s cluster: another project directory, the same config.yaml (so the same database) and agents. */
async function secondNode(first: TestProject, start = true): Promise<TestProject> {
  const config = first.read("config.yaml");
  return createProject({ config: () => config, files: FILES, start, env: DAEMON_ENV, cliEnv: KEY });
}

async function setSecret(p: TestProject): Promise<void> {
  const set = await p.cli(["secret", "set", "DEPLOY_HOOK"], { input: HOOK_SECRET });
  expect(set.code, set.stderr).toBe(0);
}

/** The scheduled times of ticker's queued messages. */
async function ticks(p: TestProject): Promise<number[]> {
  return (await p.events("ticker"))
    .filter((e) => short(e.type) === "message.queued")
    .map((e) => Date.parse((e.data.text as string).replace(/^tick /, "")));
}

describe("events out and in on a cluster of two daemons", () => {
  it("each delivery, schedule firing, inbound webhook and event trigger happens once across the nodes", async () => {
    const receiver = await startReceiver();
    const a = await createProject({
      start: false,
      config: (text) => `${text.replace(/\n?$/, "\n")}${subscriberOf(receiver)}`,
      files: FILES,
      env: DAEMON_ENV,
      cliEnv: KEY,
    });
    await setSecret(a);
    await a.start();
    const b = await secondNode(a, false);
    await b.start();
    const nodes = await a.apiOk<NodeList>("GET", "/v1/nodes");
    expect(nodes.nodes.length).toBe(2);

    // Messages through either node; echoer is driven by one of them.
    for (let i = 0; i < 3; i++) {
      await a.send("echoer", `through a ${i}`);
      await b.send("echoer", `through b ${i}`);
    }
    const sent = await a.events("echoer");
    await waitFor(() => receiver.accepted().length >= sent.length || undefined, "every event of echoer at the receiver", 30_000);
    // A repeat would come from a second node that claimed a delivery while the first held it, and sent it at once. A
    // later turn's events queue behind those deliveries (each agent's events reach a subscriber in order, and a
    // delivery is claimed only once every one before it in its queue was recorded delivered): once they have arrived,
    // so has any repeat sent before them.
    await b.send("echoer", "after them");
    const events = await a.events("echoer");
    await waitFor(() => receiver.accepted().length >= events.length || undefined, "the later turn's events at the receiver", 30_000);
    expect(receiver.requests.map((r) => r.json.id)).toEqual(events.map((e) => e.id));

    // Both nodes run the schedule; each second fires once.
    const times = await waitFor(async () => {
      const t = await ticks(a);
      return t.length >= 5 ? t : undefined;
    }, "five ticks");
    expect(new Set(times).size).toBe(times.length);
    expectEverySecond(times);

    // The same inbound webhook sent to both nodes queues one message; the event trigger fired once per echoer turn.
    const body = JSON.stringify({ service: "billing" });
    const at = new Date();
    const headers = {
      "content-type": "application/json",
      "webhook-id": "msg_cluster_1",
      "webhook-timestamp": String(Math.floor(at.getTime() / 1000)),
      "webhook-signature": new Webhook(HOOK_SECRET).sign("msg_cluster_1", at, body),
    };
    const [ra, rb] = await Promise.all(
      [a, b].map((n) => n.api<{ message: string }>("POST", "/v1/hooks/default/deploy", undefined, { token: null, raw: body, headers })),
    );
    expect([ra!.status, rb!.status], `${ra!.text} ${rb!.text}`).toEqual([202, 202]);
    expect(ra!.json.message).toBe(rb!.json.message);
    const texts = await waitFor(async () => {
      const q = (await b.events("listener")).filter((e) => short(e.type) === "message.queued").map((e) => e.data.text as string);
      return q.length >= 8 ? q : undefined;
    }, "the listener's messages");
    // Several looks of both nodes' firing sweepers (100 ms apart): a firing done twice would show.
    await sleep(500);
    const final = (await b.events("listener")).filter((e) => short(e.type) === "message.queued").map((e) => e.data.text as string);
    expect(final).toEqual(texts);
    expect(final.filter((t) => t === "deployed billing")).toHaveLength(1);
    expect(final.filter((t) => t.startsWith("echoer said ")).sort()).toEqual(
      [
        ...[0, 1, 2].flatMap((i) => [`echoer said You said: through a ${i}`, `echoer said You said: through b ${i}`]),
        "echoer said You said: after them",
      ].sort(),
    );
  });

  it("a delivery claimed by a node killed mid-request is sent by another node once the claim expires", async () => {
    // Nothing is answered until the node that sent the first request has died holding its claim: not its own retry
    // either, should its timeout pass before the kill lands on a busy machine.
    let killedAt: number | undefined = undefined;
    const receiver = await startReceiver({ respond: () => (killedAt === undefined ? "hang" : { status: 200 }) });
    const a = await createProject({
      config: (text) => `${text.replace(/\n?$/, "\n")}${subscriberOf(receiver, 2)}`,
      files: FILES,
      env: DAEMON_ENV,
      cliEnv: KEY,
    });
    const b = await secondNode(a, false);
    await a.send("echoer", "one");
    await waitFor(() => receiver.requests.length > 0 || undefined, "the first request");
    const killed = await a.kill();
    expect(killed.signal).toBe("SIGKILL");
    killedAt = Date.now();
    await b.start();
    const events = await b.events("echoer");
    await waitFor(() => receiver.accepted().length >= events.length || undefined, "every event through the second node", 30_000);
    const first = receiver.requests[0]!;
    const retried = receiver.accepted().find((r) => r.json.id === first.json.id)!;
    // Sent by the other node, not before the dead node's claim lapsed (its 2 s timeout and the margin, from the
    // claim the first request was sent under), and never given up on.
    expect(retried.at).toBeGreaterThan(killedAt);
    expect(retried.at - first.at).toBeGreaterThan(2000);
    expect(receiver.accepted().map((r) => r.json.id)).toEqual(events.map((e) => e.id));
  });
});

/**
 * Whole seconds, in order, none twice; a step of more than a second at most
 * once (a daemon stalled past a second on a busy machine fires the latest
 * time it missed, not each one).
 */
function expectEverySecond(times: number[]): void {
  const steps = times.slice(1).map((t, i) => t - times[i]!);
  for (const step of steps) expect(step % 1000, `steps ${steps.join(", ")}`).toBe(0);
  expect(steps.every((s) => s > 0)).toBe(true);
  expect(steps.filter((s) => s > 1000).length, `steps ${steps.join(", ")}`).toBeLessThanOrEqual(1);
}
