/**
 * `model: [primary, backup]` on a real daemon: two openai-compatible models
 * on one loopback server (told apart by the model id in the request). The
 * primary answers with provider errors; the backup answers. A server error,
 * an overload and refused credentials move the turn to the backup, recorded
 * as `model.fell_back` and priced at the backup's rates; a bad request does
 * not (it would fail on the backup too).
 */
import { beforeAll, describe, expect, it } from "vitest";
import { agentFile, createProject, short, type TestProject } from "../helpers/spawn-daemon.js";
import { chunk, sse, startOpenAiLoopback, usageChunk, type LoopbackReply, type OpenAiLoopback } from "../helpers/openai-loopback.js";

let server: OpenAiLoopback;
let p: TestProject;
/** What the primary model answers now. */
let primaryFails: LoopbackReply;

const PRIMARY_PRICE = { input: 100, output: 100 };
const BACKUP_PRICE = { input: 1, output: 2 };
const USAGE = { prompt: 300, completion: 40 };
const BACKUP_COST = (USAGE.prompt * BACKUP_PRICE.input + USAGE.completion * BACKUP_PRICE.output) / 1_000_000;

const error = (status: number, type: string, message: string): LoopbackReply => ({
  status,
  pieces: [JSON.stringify({ error: { message, type, code: null } })],
});

beforeAll(async () => {
  server = await startOpenAiLoopback((req) => {
    if (req.body?.model === "primary-model") return primaryFails;
    return {
      pieces: sse([
        chunk({ role: "assistant", content: "" }, null, "backup-model"),
        chunk({ content: "Answered by the backup." }, null, "backup-model"),
        chunk({}, "stop", "backup-model"),
        usageChunk(USAGE.prompt, USAGE.completion, "backup-model"),
      ]),
    };
  });
  const model = (id: string, price: object) => ({
    provider: "openai-compatible",
    model: id,
    base_url: server.baseUrl,
    api_key: "x",
    price,
  });
  p = await createProject({
    models: { primary: model("primary-model", PRIMARY_PRICE), backup: model("backup-model", BACKUP_PRICE) },
    files: {
      // retries: 0 keeps each model to one attempt, so the test waits on no backoff.
      "agents/steady.md": agentFile({ description: "Falls back to a second model", model: ["primary", "backup"], retries: 0 }),
    },
  });
});

/** The events of the turn `run`, by short type. */
async function turnEvents(run: string) {
  return (await p.events("steady")).filter((e) => e.run === run);
}

describe("model: [primary, backup]", () => {
  it("a 500 from the primary moves the turn to the backup: model.fell_back, the backup's reply, spend at the backup's price", async () => {
    primaryFails = error(500, "server_error", "The server had an error while processing your request");
    const before = server.requests.length;
    const { run, end } = await p.send("steady", "Hello", "five-hundred");
    expect(short(end.type)).toBe("turn.completed");
    expect(end.data.reply).toBe("Answered by the backup.");
    expect(end.data.spend_usd).toBeCloseTo(BACKUP_COST, 12);
    expect(server.requests.slice(before).map((r) => r.body?.model)).toEqual(["primary-model", "backup-model"]);

    const events = await turnEvents(run);
    const fell = events.filter((e) => short(e.type) === "model.fell_back");
    expect(fell).toHaveLength(1);
    expect(fell[0]!.data).toMatchObject({ from: "primary", to: "backup", iteration: 1, status: 500, code: "model_error", retryable: true });
    expect(fell[0]!.data.error).toMatch(/500.*server had an error/);
    const replied = events.find((e) => short(e.type) === "model.replied")!;
    expect(replied.data.model).toBe("backup");
    expect(replied.data.cost_usd).toBeCloseTo(BACKUP_COST, 12);
    // The order the timeline reads: the call, the fall back, the reply.
    expect(events.map((e) => short(e.type)).filter((t) => t.startsWith("model."))).toEqual([
      "model.called",
      "model.fell_back",
      "model.replied",
    ]);
  });

  it("an overloaded primary (529) and refused credentials (401) fall back too", async () => {
    for (const [status, reply] of [
      [529, error(529, "overloaded_error", "Overloaded")],
      [401, error(401, "invalid_request_error", "Incorrect API key provided")],
    ] as const) {
      primaryFails = reply;
      const { run, end } = await p.send("steady", "Hello", `status-${status}`);
      expect(short(end.type), String(status)).toBe("turn.completed");
      expect(end.data.reply).toBe("Answered by the backup.");
      const fell = (await turnEvents(run)).filter((e) => short(e.type) === "model.fell_back");
      expect(fell.map((e) => e.data.status)).toEqual([status]);
    }
  });

  it("a 400 from the primary is the request's fault: no fall back, the turn fails with model_error", async () => {
    primaryFails = error(400, "invalid_request_error", "Invalid value for 'messages'");
    const before = server.requests.length;
    const { run, end } = await p.send("steady", "Hello", "bad-request");
    expect(short(end.type)).toBe("turn.failed");
    expect(end.data.code).toBe("model_error");
    expect(server.requests.slice(before).map((r) => r.body?.model)).toEqual(["primary-model"]);
    const events = await turnEvents(run);
    expect(events.filter((e) => short(e.type) === "model.fell_back")).toEqual([]);
    expect(events.find((e) => short(e.type) === "model.failed")!.data.error).toMatch(/400.*Invalid value/);
  });

  it("the agent's detail shows the list: model first, then fallback_models", async () => {
    const detail = await p.apiOk<{ model?: string; fallback_models?: string[] }>("GET", `/v1/agents/${await p.agentId("steady")}`);
    expect(detail.model).toBe("primary");
    expect(detail.fallback_models).toEqual(["backup"]);
    const shown = await p.cli(["agent", "show", "steady"]);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toContain("model: primary (then backup)");
  });
});
