/**
 * GET /metrics from the real daemon, read as a Prometheus scraper reads it
 * (a strict parser of the text format): what a turn with a worker call, a
 * turn parked for approval and a queued message show, the token it takes,
 * bounded labels, and `telemetry.metrics_listen`.
 */
import { spawn } from "node:child_process";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import { freePort } from "../helpers/free-port.js";
import { parsePrometheusText, sampleValue, type MetricFamily } from "../helpers/prometheus-text.js";
import { REPO_ROOT, agentFile, cleanupLater, createProject, short, waitFor, type TestProject } from "../helpers/spawn-daemon.js";
import { workerArgs } from "../helpers/worker-bundle.js";

const LOOKUP = `steps:
  - tool_calls:
      - tool: workers/find_order
        args: { order_id: "{{message}}" }
  - text: "Found {{result}}"
`;

const WRITE_NOTE = `steps:
  - tool_calls:
      - tool: files/write
        args: { path: notes/today.md, content: "{{message}}" }
  - text: "Saved."
`;

/** Every family issue #18 names, with its type. */
const FAMILIES: Record<string, MetricFamily["type"]> = {
  wardrik_turns_total: "counter",
  wardrik_turn_duration_seconds: "histogram",
  wardrik_tool_calls_total: "counter",
  wardrik_model_tokens_total: "counter",
  wardrik_cost_usd_total: "counter",
  wardrik_approvals_waiting: "gauge",
  wardrik_agents: "gauge",
  wardrik_queue_depth: "gauge",
  wardrik_store_commit_seconds: "histogram",
  wardrik_worker_connections: "gauge",
  wardrik_webhook_deliveries_total: "counter",
};

/** The only label names a series may carry: none of them holds an ID that grows with use. */
const BOUNDED_LABELS = new Set(["org", "agent", "outcome", "tool", "model", "type", "source", "status", "le", "version"]);

function startWorker(p: TestProject): () => string {
  const file = fileURLToPath(new URL("./fixtures/order-worker.ts", import.meta.url));
  const env: NodeJS.ProcessEnv = { ...process.env, WARDRIK_URL: p.url, WARDRIK_TOKEN: p.token };
  delete env.NODE_OPTIONS;
  const child = spawn(process.execPath, workerArgs(file), {
    cwd: REPO_ROOT,
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout.setEncoding("utf8").on("data", (c: string) => (out += c));
  child.stderr.setEncoding("utf8").on("data", (c: string) => (out += c));
  cleanupLater(async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((r) => child.once("exit", r));
    child.kill("SIGKILL");
    await exited;
  });
  return () => out;
}

async function scrape(p: TestProject): Promise<Map<string, MetricFamily>> {
  const res = await p.api("GET", "/metrics");
  expect(res.status, res.text).toBe(200);
  expect(res.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8");
  return parsePrometheusText(res.text);
}

describe("GET /metrics", () => {
  it("counts turns, calls, tokens and spend, shows waiting approvals, agents, the queue and workers, with bounded labels", async () => {
    const p = await createProject({
      scripts: { lookup: LOOKUP, note: WRITE_NOTE },
      // USD per million tokens: the scripted model's few tokens cost something.
      models: { priced: { provider: "script", model: "lookup", price: { input: 1000, output: 2000 } } },
      remove: ["agents/helper.md"],
      files: {
        "agents/orders.md": agentFile({ description: "Looks up orders.", model: "priced", tools: ["workers/*"] }),
        "agents/notes.md": agentFile({ description: "Keeps notes.", model: "note", tools: ["files"], policy: "careful" }),
        "policies/careful.yaml": "description: Ask before writing.\nrules:\n  - tool: files/write\n    decision: ask\n",
      },
    });

    // Before anything ran: every family is announced, with a well-formed exposition.
    const empty = await scrape(p);
    for (const [name, type] of Object.entries(FAMILIES)) {
      expect(empty.get(name)?.type, name).toBe(type);
      expect(empty.get(name)?.help, name).not.toBe("");
    }
    expect(sampleValue(empty, "wardrik_turns_total")).toBe(0);
    expect(sampleValue(empty, "wardrik_agents", { status: "idle" })).toBe(2);

    const workerOutput = startWorker(p);
    const orders = await p.agentId("orders");
    await waitFor(async () => sampleValue(await scrape(p), "wardrik_worker_connections") === 1, `the worker to connect: ${workerOutput()}`);

    const { end } = await p.send("orders", "ord_7");
    expect(short(end.type), JSON.stringify(end.data)).toBe("turn.completed");
    const conversationId = end.data.conversation_id as string;

    // A turn that waits for a person, and a message queued behind it in the same conversation.
    const notes = await p.agentId("notes");
    await p.apiOk("POST", `/v1/agents/${notes}/messages`, { text: "buy milk" });
    const asked = await p.waitForEvent("notes", (e) => short(e.type) === "approval.requested");
    // The call waits once approval.requested is stored; the turn parks in a later transaction (the agent's status).
    await p.waitForEvent("notes", (e) => short(e.type) === "turn.parked" && e.run === asked.run);
    await p.apiOk("POST", `/v1/agents/${notes}/messages`, { text: "and bread" });

    const during = await scrape(p);
    expect(sampleValue(during, "wardrik_turns_total", { agent: "orders", outcome: "completed" })).toBe(1);
    expect(sampleValue(during, "wardrik_turn_duration_seconds_count", { agent: "orders", outcome: "completed" })).toBe(1);
    expect(sampleValue(during, "wardrik_turn_duration_seconds_sum", { agent: "orders" })).toBeGreaterThan(0);
    expect(sampleValue(during, "wardrik_tool_calls_total", { tool: "workers/find_order", outcome: "completed" })).toBe(1);
    expect(sampleValue(during, "wardrik_model_tokens_total", { agent: "orders", model: "priced", type: "input" })).toBeGreaterThan(0);
    expect(sampleValue(during, "wardrik_model_tokens_total", { agent: "orders", model: "priced", type: "output" })).toBeGreaterThan(0);
    expect(sampleValue(during, "wardrik_cost_usd_total", { agent: "orders", source: "model" })).toBeGreaterThan(0);
    expect(sampleValue(during, "wardrik_approvals_waiting", { agent: "notes" })).toBe(1);
    expect(sampleValue(during, "wardrik_approvals_waiting", { agent: "orders" })).toBe(0);
    expect(sampleValue(during, "wardrik_queue_depth", { agent: "notes" })).toBe(1);
    expect(sampleValue(during, "wardrik_agents", { status: "parked" })).toBe(1);
    expect(sampleValue(during, "wardrik_agents", { status: "idle" })).toBe(1);
    expect(sampleValue(during, "wardrik_worker_connections")).toBe(1);
    expect(sampleValue(during, "wardrik_store_commit_seconds_count")).toBeGreaterThan(5);

    // The agent label is the agent's name; no label carries an ID (conversation, turn, call, agent ID).
    for (const f of during.values()) {
      for (const s of f.samples) {
        for (const [label, value] of Object.entries(s.labels)) {
          expect(BOUNDED_LABELS.has(label), `${s.name} label ${label}`).toBe(true);
          expect([conversationId, orders, notes, asked.run, asked.data.call]).not.toContain(value);
        }
      }
    }

    // Approved: the turn ends, the waiting gauge drops, and the queued message runs.
    expect((await p.api("POST", `/v1/agents/${notes}/calls/${String(asked.data.call)}/approve`)).status).toBe(200);
    await p.waitForTurnEnd("notes", asked.run!);
    await waitFor(async () => {
      const after = await scrape(p);
      return (
        sampleValue(after, "wardrik_turns_total", { agent: "notes", outcome: "completed" }) === 1 &&
        sampleValue(after, "wardrik_approvals_waiting") === 1 &&
        sampleValue(after, "wardrik_queue_depth") === 0
      );
    }, "the approved turn to end and the queued message to become a turn that waits in its turn");
    const after = await scrape(p);
    expect(sampleValue(after, "wardrik_tool_calls_total", { tool: "files/write", outcome: "completed" })).toBe(1);
  });

  // One daemon for these two: its own metrics address, and two subscribers (neither test's checks see the other's part).
  describe("the metrics address, and webhook deliveries", () => {
    let p: TestProject;
    let metricsPort: number;
    // Two receivers on loopback: one takes every delivery, one refuses every one.
    const hits = { ok: 0, refused: 0 };
    beforeAll(async () => {
      const receiver = (status: number, key: keyof typeof hits) =>
        createServer((req, res) => {
          req.resume();
          req.on("end", () => {
            hits[key]++;
            res.writeHead(status).end();
          });
        });
      const ok = receiver(204, "ok");
      const refusing = receiver(500, "refused");
      for (const srv of [ok, refusing]) await new Promise<void>((r) => srv.listen(0, "127.0.0.1", r));
      cleanupLater(async () => {
        for (const srv of [ok, refusing]) await new Promise<void>((r) => srv.close(() => r()));
      });
      const url = (srv: Server) => `http://127.0.0.1:${(srv.address() as AddressInfo).port}/hook`;
      metricsPort = await freePort();
      p = await createProject({
        config: (text) =>
          `${text.replace(/\n?$/, "\n")}telemetry:\n  metrics_listen: 127.0.0.1:${metricsPort}\n` +
          `subscribers:\n  - url: ${url(ok)}\n    types: [turn.completed]\n  - url: ${url(refusing)}\n    types: [turn.completed]\n`,
      });
    });

    it("takes the admin token; telemetry.metrics_listen serves it without one on its own address, and nothing else there", async () => {
      expect((await p.api("GET", "/metrics", undefined, { token: null })).status).toBe(401);
      const orgToken = (await p.apiOk<{ token: string }>("POST", "/v1/tokens", { org: "default" })).token;
      const refused = await p.api("GET", "/metrics", undefined, { token: orgToken });
      expect(refused.status).toBe(403);
      expect(refused.text).toContain("admin token");
      expect((await p.api("GET", "/metrics")).status).toBe(200);

      const open = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
      expect(open.status).toBe(200);
      const families = parsePrometheusText(await open.text());
      expect(families.get("wardrik_turns_total")?.type).toBe("counter");
      expect(sampleValue(families, "wardrik_build_info")).toBe(1);
      const api = await fetch(`http://127.0.0.1:${metricsPort}/v1/agents`);
      expect(api.status).toBe(404);
      expect(await api.text()).toContain("Only GET /metrics");
      expect(p.daemonStderr()).toContain(`http://127.0.0.1:${metricsPort}/metrics`);
    });

    it("counts webhook deliveries by outcome: delivered, and failed attempts that will be retried", async () => {
      expect(sampleValue(await scrape(p), "wardrik_webhook_deliveries_total", { outcome: "delivered" })).toBe(0);
      const { end } = await p.send("helper", "hello");
      expect(short(end.type)).toBe("turn.completed");
      await waitFor(async () => {
        const m = await scrape(p);
        return (
          (sampleValue(m, "wardrik_webhook_deliveries_total", { outcome: "delivered" }) ?? 0) >= 1 &&
          (sampleValue(m, "wardrik_webhook_deliveries_total", { outcome: "failed" }) ?? 0) >= 1
        );
      }, "a delivered and a failed delivery attempt to be counted");
      expect(hits.ok).toBeGreaterThanOrEqual(1);
      expect(hits.refused).toBeGreaterThanOrEqual(1);
    });
  });
});
