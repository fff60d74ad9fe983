/**
 * One message must never stop the daemon. The largest messages the API
 * accepts, in the shapes that made token counting quadratic (one word without
 * spaces, emoji, CJK, random bytes decoded as text), go to an agent whose
 * small context window makes compaction count them; meanwhile another org's
 * requests keep answering within a second. Then the daemon is killed with
 * those turns open: the new one answers /v1/health within 5 s, recounts the
 * same messages while resuming, and finishes every turn.
 *
 * Latencies are measured per request: a bound on correctness (a stalled event
 * loop), not a benchmark.
 */
import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { MAX_BODY_BYTES } from "../../src/http/server.js";
import { agentFile, createProject, short, sleep, type TestProject, type WireEvent } from "../helpers/spawn-daemon.js";

/** What the API accepts: PostMessageBody's maximum, within the body limit once JSON-encoded. */
const MAX_CHARS = 1_000_000;

/** The longest prefix of `text` (whole characters) that the API accepts as a message. */
function largestAccepted(text: string): string {
  let lo = 0;
  let hi = Math.min(text.length, MAX_CHARS);
  const fits = (n: number) => Buffer.byteLength(JSON.stringify({ text: text.slice(0, n), conversation: "c" })) + 64 <= MAX_BODY_BYTES;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (fits(mid)) lo = mid;
    else hi = mid - 1;
  }
  const code = text.charCodeAt(lo - 1);
  return text.slice(0, code >= 0xd800 && code <= 0xdbff ? lo - 1 : lo);
}

const SHAPES: Record<string, string> = {
  word: largestAccepted("wardrik".repeat(MAX_CHARS / 7 + 1)),
  emoji: largestAccepted("😀🎉🚀".repeat(MAX_CHARS / 6 + 1)),
  cjk: largestAccepted("漢字仮名交じり文".repeat(MAX_CHARS / 8 + 1)),
  random: largestAccepted(randomBytes(MAX_CHARS).toString("utf8")),
};

const BIG_SCRIPT = `scenarios:
  - match: "^hello"
    steps:
      - text: "hi"
steps:
  - text: "Read it all."
    delay_ms: 10000
`;

/** Another org's traffic: each request's latency, in order. */
class Probe {
  latencies: { what: string; ms: number; status: number }[] = [];
  private running = false;
  private loop: Promise<void> | undefined;

  constructor(
    private readonly p: TestProject,
    private readonly token: string,
    private readonly agentId: string,
  ) {}

  start(): void {
    this.running = true;
    this.loop = (async () => {
      for (let i = 0; this.running; i++) {
        await this.time("GET /v1/agents", "GET", "/v1/agents");
        await this.time("GET events", "GET", `/v1/agents/${this.agentId}/events?limit=5`);
        if (i % 5 === 0) await this.time("POST message", "POST", `/v1/agents/${this.agentId}/messages`, { text: `ping ${i}` });
        await sleep(50);
      }
    })();
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.loop;
  }

  private async time(what: string, method: string, path: string, body?: unknown): Promise<void> {
    const t0 = performance.now();
    const r = await this.p.api(method, path, body, { token: this.token });
    this.latencies.push({ what, ms: performance.now() - t0, status: r.status });
  }
}

const endOf = (events: WireEvent[], run: string) =>
  events.find((e) => e.run === run && /\.turn\.(completed|failed|cancelled)$/.test(e.type));

describe("the largest messages", () => {
  it("never stall another org's requests, and a restart with them open answers within 5 s and finishes them", async () => {
    const p = await createProject({
      scripts: { big: BIG_SCRIPT, quick: `steps:\n  - text: "pong"\n` },
      files: { "agents/reader.md": agentFile({ description: "Reads long messages", model: "big", context_window: 4000 }) },
    });
    const readerId = await p.agentId("reader");
    const other = await p.apiOk<{ token: string }>("POST", "/v1/tokens", { org: "acme", name: "probe" });
    const created = await p.api<{ id: string }>(
      "POST",
      "/v1/agents",
      { name: "pinger", description: "Answers pings", model: "quick" },
      { token: other.token },
    );
    expect(created.status).toBe(201);
    const probe = new Probe(p, other.token, created.json.id);

    // A first exchange in each conversation, so compaction has something to fold.
    for (const shape of Object.keys(SHAPES)) await p.send(readerId, `hello ${shape}`, shape);

    probe.start();
    const runs: Record<string, string> = {};
    for (const [shape, text] of Object.entries(SHAPES)) {
      const r = await p.api<{ message: string }>("POST", `/v1/agents/${readerId}/messages`, { text, conversation: shape });
      expect(r.status, `${shape}: ${r.text.slice(0, 300)}`).toBe(202);
      const started = await p.waitForEvent(
        readerId,
        (e) => short(e.type) === "turn.started" && ((e.data.messages as string[] | undefined) ?? []).includes(r.json.message),
        60_000,
      );
      runs[shape] = started.run!;
    }
    // Every big turn has counted its message and folded the conversation's start into a summary.
    for (const [shape, run] of Object.entries(runs)) {
      await p.waitForEvent(readerId, (e) => e.run === run && short(e.type) === "conversation.compacted", 60_000);
      await p.waitForEvent(readerId, (e) => e.run === run && short(e.type) === "model.called" && e.data.iteration === 1, 60_000);
      expect(endOf(await p.events(readerId), run), `${shape} is still open`).toBeUndefined();
    }
    await probe.stop();

    // A crash with every big turn open: the new daemon resumes them, counting the same messages again.
    await p.kill();
    const t0 = performance.now();
    await p.start();
    const upMs = performance.now() - t0;
    expect(upMs, "the restarted daemon answered /v1/health after").toBeLessThan(5_000);

    const resumed = new Probe(p, other.token, created.json.id);
    resumed.start();
    for (const [shape, run] of Object.entries(runs)) {
      const end = await p.waitForTurnEnd(readerId, run, 90_000);
      expect(short(end.type), shape).toBe("turn.completed");
      expect(end.data.reply).toBe("Read it all.");
    }
    await resumed.stop();

    for (const l of [...probe.latencies, ...resumed.latencies]) {
      expect(l.status, l.what).toBeLessThan(300);
      expect(l.ms, `${l.what} took ${Math.round(l.ms)} ms`).toBeLessThan(1_000);
    }
    expect(probe.latencies.length).toBeGreaterThan(10);
    expect(resumed.latencies.length).toBeGreaterThan(5);
  }, 300_000);
});
