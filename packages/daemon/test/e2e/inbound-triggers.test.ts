/**
 * Inbound webhooks and event triggers on the real daemon: a webhook signed as
 * Standard Webhooks (signed here by the independent `standardwebhooks`
 * package) or as GitHub signs it answers 202 with the message it queued; a
 * missing or wrong signature is 401 and queues nothing; a repeat of the same
 * delivery queues nothing new; one agent's events queue messages for another;
 * and both kinds wake an asleep agent.
 */
import { createHmac, randomBytes } from "node:crypto";
import { Webhook } from "standardwebhooks";
import { beforeAll, describe, expect, it } from "vitest";
import type { AgentDetail, HookAccepted } from "@wardrik/protocol";
import { agentFile, createProject, short, waitFor, type TestProject, type WireEvent } from "../helpers/spawn-daemon.js";

const DEPLOY_SECRET = `whsec_${randomBytes(32).toString("base64")}`;
const GITHUB_SECRET = "a plain shared secret";

let p: TestProject;

const agent = (triggers: unknown[], idle: number | "infinity" = "infinity") =>
  agentFile({ description: "Woken from outside", model: "script/echo", idle_timeout: idle, triggers });

/** A Standard Webhooks request, signed by the `standardwebhooks` package. */
function standardHeaders(secret: string, id: string, body: string, at = new Date()): Record<string, string> {
  return {
    "content-type": "application/json",
    "webhook-id": id,
    "webhook-timestamp": String(Math.floor(at.getTime() / 1000)),
    "webhook-signature": new Webhook(secret).sign(id, at, body),
  };
}

function hook(name: string, body: string, headers: Record<string, string>) {
  return p.api<HookAccepted & { error?: { message: string } }>("POST", `/v1/hooks/default/${name}`, undefined, {
    token: null,
    raw: body,
    headers,
  });
}

const queued = (evs: WireEvent[]) => evs.filter((e) => short(e.type) === "message.queued");

/** Wakes the agent with a message, then waits until it has fallen asleep again; returns the seq of its agent.asleep. */
async function asleep(name: string): Promise<number> {
  const { end } = await p.send(name, "before the nap");
  const e = await p.waitForEvent(name, (x) => short(x.type) === "agent.asleep" && x.seq > end.seq, 30_000);
  return e.seq;
}

/** After `after`: the agent woke (agent.awake) and then queued a message; returns that message's event. */
async function wokeAndQueued(name: string, after: number): Promise<WireEvent> {
  return waitFor(async () => {
    const evs = await p.events(name, after);
    const awake = evs.findIndex((e) => short(e.type) === "agent.awake");
    if (awake < 0) return undefined;
    return evs.slice(awake + 1).find((e) => short(e.type) === "message.queued");
  }, `${name} to wake and queue a message`);
}

beforeAll(async () => {
  p = await createProject({
    start: false,
    files: {
      "agents/deployer.md": agent([
        { webhook: "deploy", secret: "${secret:DEPLOY_HOOK}", message: "Deployed {{service}} at {{build.version}}" },
      ]),
      "agents/gitwatch.md": agent([{ webhook: "push", secret: "${secret:GITHUB_HOOK}", message: "Push to {{repository.name}}" }]),
      "agents/napper.md": agent([{ webhook: "nudge", secret: "${secret:DEPLOY_HOOK}", message: "nudged" }], 1),
      "agents/triage.md": agentFile({ description: "Watched", model: "script/echo" }),
      "agents/watcher.md": agent([
        { event: { agent: "triage", types: ["turn.completed"] }, message: "triage answered: {{data.reply}} ({{agent}})" },
      ]),
      "agents/pinger.md": agentFile({ description: "Watched while the other sleeps", model: "script/echo" }),
      // A trigger on a secret nobody set: the agent is unreadable, and says where.
      "agents/broken.md": agent([{ webhook: "broken", secret: "${secret:NOT_SET}", message: "never" }]),
      "agents/dozer.md": agent([{ event: { agent: "pinger", types: ["turn.completed"] }, message: "pinger is done" }], 1),
    },
    // Idle agents are put to sleep within 100 ms of their idle_timeout, not within the default second.
    env: { WARDRIK_SLEEP_CHECK_MS: "100" },
  });
  for (const [name, value] of [
    ["DEPLOY_HOOK", DEPLOY_SECRET],
    ["GITHUB_HOOK", GITHUB_SECRET],
  ] as const) {
    const set = await p.cli(["secret", "set", name], { input: value });
    expect(set.code, set.stderr).toBe(0);
  }
  await p.start();
});

describe("inbound webhooks", () => {
  it("a Standard Webhooks request signed with the secret answers 202 with the message it queued", async () => {
    const body = JSON.stringify({ service: "billing", build: { version: "1.4.2" } });
    const r = await hook("deploy", body, standardHeaders(DEPLOY_SECRET, "msg_deploy_1", body));
    expect(r.status, r.text).toBe(202);
    expect(r.json.message).toMatch(/^msg_/);
    expect(r.json.replayed).toBe(false);
    expect(r.json.messages).toEqual([
      { agent: await p.agentId("deployer"), agent_name: "deployer", message: r.json.message, conversation: "trigger:webhook:deploy" },
    ]);
    const q = queued(await p.events("deployer"));
    expect(q).toHaveLength(1);
    expect(q[0]!.data).toMatchObject({
      message: r.json.message,
      text: "Deployed billing at 1.4.2",
      conversation: "trigger:webhook:deploy",
    });
    const end = await p.waitForEvent("deployer", (e) => short(e.type) === "turn.completed");
    expect(end.data.reply).toBe("You said: Deployed billing at 1.4.2");

    // The sender retries the same delivery: the same message, nothing new queued.
    const again = await hook("deploy", body, standardHeaders(DEPLOY_SECRET, "msg_deploy_1", body));
    expect(again.status).toBe(202);
    expect(again.json).toMatchObject({ message: r.json.message, replayed: true });
    expect(queued(await p.events("deployer"))).toHaveLength(1);

    const show = await p.cli(["agent", "show", "deployer", "--json"]);
    const t = (JSON.parse(show.stdout) as AgentDetail).triggers[0]!;
    expect(t).toMatchObject({ kind: "webhook", key: "webhook:deploy", last_message: r.json.message });
  });

  it("a missing, wrong or stale signature is 401 and queues nothing", async () => {
    const body = JSON.stringify({ service: "forged" });
    const before = queued(await p.events("deployer")).length;
    const other = `whsec_${randomBytes(32).toString("base64")}`;
    const tenMinutesAgo = new Date(Date.now() - 10 * 60_000);
    const cases: Record<string, string>[] = [
      { "content-type": "application/json" },
      standardHeaders(other, "msg_forged_1", body),
      standardHeaders(DEPLOY_SECRET, "msg_forged_2", body, tenMinutesAgo),
      // Signed for another body.
      { ...standardHeaders(DEPLOY_SECRET, "msg_forged_3", JSON.stringify({ service: "billing" })) },
    ];
    for (const headers of cases) {
      const r = await hook("deploy", body, headers);
      expect(r.status, JSON.stringify(headers)).toBe(401);
      expect(r.headers.get("www-authenticate")).toContain("Signature");
      expect(r.text).not.toContain(DEPLOY_SECRET.slice(6, 20));
    }
    expect(queued(await p.events("deployer"))).toHaveLength(before);
    // A webhook no agent has is 404.
    expect((await hook("nothing-here", body, standardHeaders(DEPLOY_SECRET, "msg_x", body))).status).toBe(404);
  });

  it("GitHub's X-Hub-Signature-256 is accepted when it signs the body, refused when it does not", async () => {
    const body = JSON.stringify({ repository: { name: "wardrik" } });
    const sig = `sha256=${createHmac("sha256", GITHUB_SECRET).update(body).digest("hex")}`;
    const bad = await hook("push", body, { "content-type": "application/json", "x-hub-signature-256": sig.replace(/.$/, "0") });
    expect(bad.status).toBe(401);
    expect(queued(await p.events("gitwatch"))).toHaveLength(0);
    const ok = await hook("push", body, { "content-type": "application/json", "x-hub-signature-256": sig, "x-github-delivery": "gh-1" });
    expect(ok.status, ok.text).toBe(202);
    const q = queued(await p.events("gitwatch"));
    expect(q.map((e) => e.data.text)).toEqual(["Push to wardrik"]);
    expect(q[0]!.data.message).toBe(ok.json.message);
  });

  it("a signed delivery acts once: a new Idempotency-Key on a replay queues nothing new", async () => {
    const body = JSON.stringify({ service: "search", build: { version: "2.0.0" } });
    const headers = standardHeaders(DEPLOY_SECRET, "msg_deploy_replayed", body);
    const first = await hook("deploy", body, { ...headers, "idempotency-key": "key-1" });
    expect(first.status, first.text).toBe(202);
    const before = queued(await p.events("deployer")).length;
    for (const key of ["key-2", "key-3"]) {
      const again = await hook("deploy", body, { ...headers, "idempotency-key": key });
      expect(again.status, again.text).toBe(202);
      expect(again.json).toMatchObject({ message: first.json.message, replayed: true });
    }
    expect(queued(await p.events("deployer"))).toHaveLength(before);
  });

  it("a GitHub delivery acts once: a new X-GitHub-Delivery or Idempotency-Key on a replay queues nothing new, also after a restart", async () => {
    const body = JSON.stringify({ repository: { name: "replayed" } });
    const sig = `sha256=${createHmac("sha256", GITHUB_SECRET).update(body).digest("hex")}`;
    const signed = { "content-type": "application/json", "x-hub-signature-256": sig };
    const first = await hook("push", body, { ...signed, "x-github-delivery": "gh-replay-1" });
    expect(first.status, first.text).toBe(202);
    const count = async () => queued(await p.events("gitwatch")).filter((e) => e.data.text === "Push to replayed").length;
    expect(await count()).toBe(1);
    const replays: Record<string, string>[] = [
      { ...signed, "x-github-delivery": "gh-replay-2" },
      { ...signed, "x-github-delivery": "gh-replay-3", "idempotency-key": "fresh-key" },
      signed,
    ];
    for (const headers of replays) {
      const again = await hook("push", body, headers);
      expect(again.status, again.text).toBe(202);
      expect(again.json).toMatchObject({ message: first.json.message, replayed: true });
    }
    expect(await count()).toBe(1);
    // What was seen is in the database: a replay after a restart is still a replay.
    await p.restart();
    const afterRestart = await hook("push", body, { ...signed, "x-github-delivery": "gh-replay-4" });
    expect(afterRestart.status, afterRestart.text).toBe(202);
    expect(afterRestart.json).toMatchObject({ message: first.json.message, replayed: true });
    expect(await count()).toBe(1);
    // Another body is another delivery.
    const other = JSON.stringify({ repository: { name: "replayed" }, after: "abc" });
    const otherSig = `sha256=${createHmac("sha256", GITHUB_SECRET).update(other).digest("hex")}`;
    const next = await hook("push", other, { "content-type": "application/json", "x-hub-signature-256": otherSig });
    expect(next.status, next.text).toBe(202);
    expect(next.json.replayed).toBe(false);
    expect(await count()).toBe(2);
  });

  it("wakes an asleep agent", async () => {
    const slept = await asleep("napper");
    const body = "{}";
    const r = await hook("nudge", body, standardHeaders(DEPLOY_SECRET, "msg_nudge_1", body));
    expect(r.status, r.text).toBe(202);
    const q = await wokeAndQueued("napper", slept);
    expect(q.data).toMatchObject({ text: "nudged", message: r.json.message });
  });
});

describe("event triggers", () => {
  it("another agent's event queues a message, once per event, with the event as the template's data", async () => {
    const first = await p.send("triage", "first");
    const second = await p.send("triage", "second");
    const texts = await waitFor(async () => {
      const t = queued(await p.events("watcher")).map((e) => e.data.text as string);
      return t.length >= 2 ? t : undefined;
    }, "two messages for watcher");
    expect(texts).toEqual(["triage answered: You said: first (triage)", "triage answered: You said: second (triage)"]);
    expect(first.end.data.reply).toBe("You said: first");
    expect(second.end.data.reply).toBe("You said: second");
    // Each of watcher's own turns ends too, and fires nothing more (it watches triage only).
    await waitFor(
      async () => (await p.events("watcher")).filter((e) => short(e.type) === "turn.completed").length === 2 || undefined,
      "watcher's two turns",
    );
    expect(queued(await p.events("watcher"))).toHaveLength(2);
    const convs = await p.apiOk<{ conversations: { key: string }[] }>("GET", `/v1/agents/${await p.agentId("watcher")}/conversations`);
    expect(convs.conversations.map((c) => c.key)).toEqual(["trigger:event:triage:turn.completed"]);
  });

  it("wakes an asleep agent", async () => {
    const slept = await asleep("dozer");
    await p.send("pinger", "wake the dozer");
    const q = await wokeAndQueued("dozer", slept);
    expect(q.data.text).toBe("pinger is done");
  });
});

describe("invalid triggers", () => {
  it("make the agent unreadable with file and line, and its webhook does not exist", async () => {
    const r = await p.apiOk<{ agents: { name: string; status: string; reason?: string }[] }>("GET", "/v1/agents?name=broken");
    const broken = r.agents.find((a) => a.name === "broken")!;
    expect(broken.status).toBe("unreadable");
    expect(broken.reason).toMatch(/^agents\/broken\.md:\d+: .*triggers\[0\]\.secret/);
    expect(broken.reason).toContain("NOT_SET");
    const body = "{}";
    expect((await hook("broken", body, standardHeaders(DEPLOY_SECRET, "msg_broken", body))).status).toBe(404);
  });
});
