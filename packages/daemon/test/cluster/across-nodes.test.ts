/**
 * Three daemons on one PostgreSQL database: whatever node a request reaches,
 * the agent's owner does the work. The worker is connected to the third node
 * only, so every call of an agent owned elsewhere crosses nodes.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { beforeAll, describe, expect, it } from "vitest";
import { runWardrik } from "../helpers/spawn-daemon.js";
import { agentMarkdown } from "../faults/fault-agent.js";
import { api, eventsOf, followEvents, short, waitUntil, type FaultEvent } from "../faults/fault-api.js";
import type { FaultWorker } from "../faults/fault-worker-process.js";
import { startCluster, waitForClusterWorker, type Cluster, type ClusterNode } from "./cluster-kit.js";

const QUICK = { toolMs: { lookup: 50, upsert: 50, charge: 50 } };

/** A parent whose child another node drives, and an agent that asks a person (scripted models, no worker). */
const COMPOSITION_FILES = {
  "policies/open.yaml": 'description: Everything.\nrules:\n  - tool: "*"\n    decision: allow\n',
  "scripts/to_kid.yaml":
    'steps:\n  - tool_calls:\n      - tool: agents/kid\n        args: { message: "{{message}}" }\n  - text: "boss got {{result}}"\n',
  "scripts/kid_says.yaml": 'steps:\n  - text: "kid on {{message}}"\n',
  "scripts/quiz.yaml":
    'steps:\n  - tool_calls:\n      - tool: person/ask\n        args: { question: "Which?" }\n  - text: "heard {{result}}"\n',
  "agents/boss.md": "---\ndescription: Delegates.\nmodel: script/to_kid\nagents: [kid]\npolicy: open\n---\nDelegate.\n",
  "agents/kid.md": "---\ndescription: Answers.\nmodel: script/kid_says\npolicy: open\n---\nAnswer.\n",
  "agents/quizzer.md": "---\ndescription: Asks.\nmodel: script/quiz\ntools: [person]\npolicy: open\n---\nAsk.\n",
  "agents/orphan.md": "---\ndescription: Asks, then loses its node.\nmodel: script/quiz\ntools: [person]\npolicy: open\n---\nAsk.\n",
};

let c: Cluster;
let w: FaultWorker;
beforeAll(async () => {
  c = await startCluster({
    count: 3,
    byPrefix: { m: QUICK, slow: { model1Ms: 8000, toolMs: { lookup: 50 } }, ask: QUICK, long: { toolMs: { lookup: 20_000, upsert: 50 } } },
    // An agent whose policy asks a person before `charge`.
    files: {
      ...COMPOSITION_FILES,
      "agents/asker.md": agentMarkdown({ policy: "ask-charge" }),
      "policies/ask-charge.yaml":
        "description: A person approves charges.\nrules:\n  - tool: workers/charge\n    decision: ask\n  - tool: workers/*\n    decision: allow\n",
    },
  });
  w = c.worker(c.nodes[2]!.url);
  await waitForClusterWorker(c, c.nodes[2]!, w);
});

async function send(via: number, text: string): Promise<string> {
  const r = await api<{ message: string }>(c.nodes[via]!, "POST", `/v1/agents/${c.agentId}/messages`, { text, conversation: "main" });
  return r.message;
}

function turnOf(events: FaultEvent[], message: string): { run: string; end: FaultEvent | undefined } | undefined {
  const run = events.find((e) => short(e.type) === "turn.started" && (e.data.messages as string[]).includes(message))?.run;
  if (!run) return undefined;
  return { run, end: events.find((e) => e.run === run && /^turn\.(completed|failed|cancelled)$/.test(short(e.type))) };
}

async function ended(message: string, via = 0): Promise<FaultEvent> {
  return waitUntil(async () => turnOf(await eventsOf(c.nodes[via]!, c.agentId), message)?.end, `the turn of ${message}`, 30_000, 50);
}

describe("a cluster of three nodes", () => {
  it("a message sent to one node runs on the agent's owner; its calls reach a worker connected to another node", async () => {
    const first = await send(0, "m-1");
    expect(short((await ended(first)).type)).toBe("turn.completed");
    const owner = await c.ownerOf(c.agentId);
    expect(owner).toBeDefined();
    // Another node takes the next message; the owner stays the owner and runs it.
    const other = c.nodes.findIndex((n) => n.name !== owner);
    const second = await send(other, "m-2");
    expect(short((await ended(second, other)).type)).toBe("turn.completed");
    expect(await c.ownerOf(c.agentId, c.nodes[other])).toBe(owner);
    // Each call ran once, in the worker that is connected to n3 only.
    for (const tag of ["m-1", "m-2"])
      expect(
        w
          .log()
          .filter((l) => l.tag.startsWith(`${tag}/`) && l.phase === "start")
          .map((l) => l.tool)
          .sort(),
      ).toEqual(["charge", "lookup", "upsert"]);
  });

  it("`agent show --json` names the owner on every node, and `wardrik nodes --json` lists the three nodes and who drives what", async () => {
    await ended(await send(1, "m-show"));
    const owner = await c.ownerOf(c.agentId);
    for (const n of c.nodes) {
      const show = await runWardrik(["agent", "show", "faulty", "--json"], {
        cwd: c.p.dir,
        env: { WARDRIK_URL: n.url, WARDRIK_TOKEN: c.p.token },
      });
      expect(show.code, show.stderr).toBe(0);
      expect((JSON.parse(show.stdout) as { node?: string }).node).toBe(owner);
    }
    const nodes = await runWardrik(["nodes", "--json"], { cwd: c.p.dir, env: { WARDRIK_URL: c.nodes[2]!.url, WARDRIK_TOKEN: c.p.token } });
    expect(nodes.code, nodes.stderr).toBe(0);
    const list = (
      JSON.parse(nodes.stdout) as { nodes: { name: string; url: string; alive: boolean; agents: string[]; last_heartbeat: string }[] }
    ).nodes;
    expect(list.map((n) => n.name).sort()).toEqual(["n1", "n2", "n3"]);
    for (const n of list) {
      expect(n.alive).toBe(true);
      expect(n.url).toBe(c.node(n.name).url);
      expect(Date.now() - Date.parse(n.last_heartbeat)).toBeLessThan(10_000);
      expect(n.agents.includes("faulty")).toBe(n.name === owner);
    }
    const text = await runWardrik(["nodes"], { cwd: c.p.dir, env: { WARDRIK_URL: c.nodes[0]!.url, WARDRIK_TOKEN: c.p.token } });
    expect(text.stdout).toMatch(new RegExp(`^${owner!}  http://127\\.0\\.0\\.1:\\d+  alive`, "m"));
  });

  it("a follower on a node that does not own the agent sees its events live", async () => {
    const owner = await c.ownerOf(c.agentId);
    const watcher = c.nodes.find((n) => n.name !== owner)!;
    const last = (await eventsOf(watcher, c.agentId)).at(-1)!.seq;
    const seen: FaultEvent[] = [];
    const f = followEvents(watcher, c.agentId, last, (e) => {
      seen.push(e);
      return short(e.type) === "turn.completed";
    });
    const sender = c.nodes.find((n) => n.name !== owner && n !== watcher)!;
    await api(sender, "POST", `/v1/agents/${c.agentId}/messages`, { text: "m-follow", conversation: "main" });
    await f.done;
    const types = seen.map((e) => short(e.type));
    expect(types[0]).toBe("message.queued");
    expect(types).toContain("round.saved");
    expect(types.filter((t) => t === "call.completed")).toHaveLength(3);
    expect(types.at(-1)).toBe("turn.completed");
    // In order, without gaps: the same record the owner wrote.
    expect(seen.map((e) => e.seq)).toEqual(seen.map((_, i) => last + 1 + i));
  });

  it("a cancel sent to a node that does not own the agent stops the owner's turn", async () => {
    const owner = await c.ownerOf(c.agentId);
    const elsewhere = c.nodes.find((n) => n.name !== owner)!;
    const m = await send(0, "slow-1");
    const started = await waitUntil(
      async () =>
        (await eventsOf(elsewhere, c.agentId)).find((e) => short(e.type) === "turn.started" && (e.data.messages as string[]).includes(m)),
      "the slow turn to start",
      20_000,
      50,
    );
    const r = await api<{ cancelled: string[] }>(elsewhere, "POST", `/v1/agents/${c.agentId}/cancel`, { conversation: "main" });
    expect(r.cancelled).toHaveLength(1);
    const end = await ended(m);
    expect(short(end.type)).toBe("turn.cancelled");
    // Long before the model's 8 s answer: the owner heard of the cancel at once.
    expect(Date.parse(end.time) - Date.parse(started.time)).toBeLessThan(5000);
    // The cancelled model step never asked for its tools.
    expect(w.log().filter((l) => l.tag.startsWith("slow-1/"))).toEqual([]);
  });

  it("an approval sent to a node that does not own the agent lets the owner run the call", async () => {
    const asker = await c.idOf("asker");
    const m = (await api<{ message: string }>(c.nodes[0]!, "POST", `/v1/agents/${asker}/messages`, { text: "ask-1", conversation: "main" }))
      .message;
    const asked = await waitUntil(
      async () => (await eventsOf(c.nodes[0]!, asker)).find((e) => short(e.type) === "approval.requested"),
      "the charge to wait for a person",
      20_000,
      50,
    );
    const owner = await c.ownerOf(asker);
    const elsewhere = c.nodes.find((n) => n.name !== owner)!;
    await api(elsewhere, "POST", `/v1/agents/${asker}/calls/${String(asked.data.call)}/approve`, {});
    const end = await waitUntil(
      async () => {
        const evs = await eventsOf(elsewhere, asker);
        const run = evs.find((e) => short(e.type) === "turn.started" && (e.data.messages as string[]).includes(m))?.run;
        return evs.find((e) => e.run === run && /^turn\.(completed|failed|cancelled)$/.test(short(e.type)));
      },
      "the turn to end",
      20_000,
      50,
    );
    expect(short(end.type)).toBe("turn.completed");
    expect(w.log().filter((l) => l.tag === "ask-1/charge" && l.phase === "start")).toHaveLength(1);
    expect(await c.ownerOf(asker)).toBe(owner);
  });

  it("a kill sent to a node that does not own the agent stops the owner's call; the turn goes on", async () => {
    const owner = await c.ownerOf(c.agentId);
    const elsewhere = c.nodes.find((n) => n.name !== owner)!;
    const m = await send(0, "long-1");
    await waitUntil(() => w.log().some((l) => l.tag === "long-1/lookup" && l.phase === "start"), "the long call to run", 20_000, 20);
    const evs = await eventsOf(elsewhere, c.agentId);
    const run = evs.find((e) => short(e.type) === "turn.started" && (e.data.messages as string[]).includes(m))!.run;
    const call = evs.find((e) => e.run === run && short(e.type) === "call.started" && e.data.tool === "workers/lookup")!;
    await api(elsewhere, "POST", `/v1/agents/${c.agentId}/calls/${String(call.data.call)}/kill`, {});
    const end = await ended(m);
    expect(short(end.type)).toBe("turn.completed");
    const turn = (await eventsOf(elsewhere, c.agentId)).filter((e) => e.run === run);
    expect(turn.filter((e) => short(e.type) === "call.killed").map((e) => e.data.call)).toEqual([call.data.call]);
    // Long before the call's 20 s: the owner heard of the kill at once.
    expect(Date.parse(end.time) - Date.parse(call.time)).toBeLessThan(10_000);
  });

  it("an agents/NAME call whose child another node drives runs the child there once and completes once", async () => {
    const [boss, kid] = [await c.idOf("boss"), await c.idOf("kid")];
    const turnEnd = (via: ClusterNode, agent: string, run: string) =>
      waitUntil(
        async () => (await eventsOf(via, agent)).find((e) => e.run === run && /^turn\.(completed|failed|cancelled)$/.test(short(e.type))),
        `turn ${run} to end`,
        30_000,
        50,
      );
    // The child wakes on n2 (the node its first message reached), the parent on n1.
    await api(c.nodes[1]!, "POST", `/v1/agents/${kid}/messages`, { text: "warm" });
    await waitUntil(
      async () => (await eventsOf(c.nodes[1]!, kid)).find((e) => short(e.type) === "turn.completed"),
      "kid's first turn",
      30_000,
      50,
    );
    await api(c.nodes[0]!, "POST", `/v1/agents/${boss}/messages`, { text: "tides" });
    const started = await waitUntil(
      async () => (await eventsOf(c.nodes[0]!, boss)).find((e) => short(e.type) === "call.started"),
      "boss's call",
      30_000,
      50,
    );
    expect(await c.ownerOf(boss)).not.toBe(await c.ownerOf(kid));
    const end = await turnEnd(c.nodes[2]!, boss, started.run!);
    expect(short(end.type)).toBe("turn.completed");
    expect(end.data.reply).toBe('boss got {"reply":"kid on tides"}');
    const child = (started.data.child as { run: string }).run;
    const kidEvents = await eventsOf(c.nodes[2]!, kid);
    expect(kidEvents.filter((e) => short(e.type) === "turn.started" && e.run === child)).toHaveLength(1);
    expect(kidEvents.filter((e) => short(e.type) === "turn.completed" && e.run === child)).toHaveLength(1);
    const bossEvents = await eventsOf(c.nodes[2]!, boss);
    expect(bossEvents.filter((e) => short(e.type) === "call.completed" && e.data.call === started.data.call)).toHaveLength(1);
  });

  it("a question answered through a node that does not own the agent completes the turn once", async () => {
    const quizzer = await c.idOf("quizzer");
    await api(c.nodes[0]!, "POST", `/v1/agents/${quizzer}/messages`, { text: "q" });
    const asked = await waitUntil(
      async () => (await eventsOf(c.nodes[0]!, quizzer)).find((e) => short(e.type) === "question.asked"),
      "the question",
      30_000,
      50,
    );
    const owner = await c.ownerOf(quizzer);
    const elsewhere = c.nodes.find((n) => n.name !== owner)!;
    await api(elsewhere, "POST", `/v1/agents/${quizzer}/calls/${String(asked.data.call)}/answer`, { answer: "the blue one" });
    const end = await waitUntil(
      async () => (await eventsOf(elsewhere, quizzer)).find((e) => e.run === asked.run && short(e.type) === "turn.completed"),
      "the turn to end",
      30_000,
      50,
    );
    expect(end.data.reply).toBe('heard {"answer":"the blue one"}');
    const evs = await eventsOf(elsewhere, quizzer);
    expect(evs.filter((e) => short(e.type) === "question.answered")).toHaveLength(1);
    expect(evs.filter((e) => e.run === asked.run && /^turn\.(completed|failed|cancelled)$/.test(short(e.type)))).toHaveLength(1);
    expect(await c.ownerOf(quizzer)).toBe(owner);
  });

  it("an MCP client of a node that does not own the agent gets its reply as the turn ends", async () => {
    // The agent is awake, so the node the client talks to does not simply claim it.
    await ended(await send(0, "m-before-mcp"));
    const owner = await c.ownerOf(c.agentId);
    expect(owner).toBeDefined();
    const elsewhere = c.nodes.find((n) => n.name !== owner)!;
    const client = new Client({ name: "wardrik-test", version: "1.0.0" });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${elsewhere.url}/v1/mcp`), {
        requestInit: { headers: { authorization: `Bearer ${c.p.token}` } },
      }),
    );
    try {
      const progress: string[] = [];
      const asked = Date.now();
      const r = (await client.callTool({ name: "faulty", arguments: { message: "m-mcp" } }, undefined, {
        onprogress: (n) => progress.push(n.message ?? ""),
        timeout: 60_000,
      })) as CallToolResult;
      expect(r.isError ?? false, JSON.stringify(r.content)).toBe(false);
      expect(progress.some((m) => m.startsWith("faulty started turn"))).toBe(true);
      // The owner's events reach this node's follower by the relay's word, as they commit: the turn takes well under a
      // second; without that word the follower found them only when its 15 s wait for a heartbeat ran out.
      expect(Date.now() - asked).toBeLessThan(10_000);
      expect(progress.filter((m) => m.startsWith("Still "))).toEqual([]);
      expect(w.log().filter((l) => l.tag.startsWith("m-mcp/") && l.phase === "start")).toHaveLength(3);
    } finally {
      await client.close();
    }
  });

  // Last in the file: it kills a node (not the worker's) and starts it again.
  it("a question outlives its owner's kill -9: another node takes the agent over, and the answer given there completes the turn once", async () => {
    const orphan = await c.idOf("orphan");
    // The node a message reaches claims an agent nobody owns: n1, which the worker (on n3) does not need.
    await api(c.nodes[0]!, "POST", `/v1/agents/${orphan}/messages`, { text: "q" });
    const asked = await waitUntil(
      async () => (await eventsOf(c.nodes[0]!, orphan)).find((e) => short(e.type) === "question.asked"),
      "the question",
      30_000,
      50,
    );
    expect(await c.ownerOf(orphan)).toBe(c.nodes[0]!.name);
    const [dead, other] = c.nodes as [ClusterNode, ClusterNode, ClusterNode];
    await dead.kill();
    try {
      // Answered at another node once the dead owner's lease has run out; until then the answer may be refused as retryable.
      await waitUntil(
        async () => {
          const r = await fetch(`${other.url}/v1/agents/${orphan}/calls/${String(asked.data.call)}/answer`, {
            method: "POST",
            headers: { authorization: `Bearer ${c.p.token}`, "content-type": "application/json" },
            body: JSON.stringify({ answer: "the red one" }),
          });
          return r.ok ? true : undefined;
        },
        "the answer to be taken at another node",
        60_000,
        250,
      );
      const end = await waitUntil(
        async () =>
          (await eventsOf(other, orphan)).find((e) => e.run === asked.run && /^turn\.(completed|failed|cancelled)$/.test(short(e.type))),
        "the turn to end",
        60_000,
        100,
      );
      expect(short(end.type)).toBe("turn.completed");
      expect(end.data.reply).toBe('heard {"answer":"the red one"}');
      const evs = await eventsOf(other, orphan);
      expect(evs.filter((e) => short(e.type) === "question.asked")).toHaveLength(1);
      expect(evs.filter((e) => short(e.type) === "question.answered")).toHaveLength(1);
      expect(evs.filter((e) => e.run === asked.run && /^turn\.(completed|failed|cancelled)$/.test(short(e.type)))).toHaveLength(1);
      expect(await c.ownerOf(orphan, other)).not.toBe(dead.name);
    } finally {
      if (!dead.alive) await dead.start();
    }
  });
});
