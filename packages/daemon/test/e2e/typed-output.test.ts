/**
 * Typed answers (`output:` in an agent file) on a real daemon. Scripted models
 * answer with fitting JSON, with prose that is sent back for repair, or with
 * JSON that never fits; a loopback OpenAI server shows the schema reaching a
 * provider with structured output as its response_format.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { agentFile, createProject, short, type TestProject } from "../helpers/spawn-daemon.js";
import { chunk, sse, startOpenAiLoopback, usageChunk, type OpenAiLoopback } from "../helpers/openai-loopback.js";

const REPORT = {
  type: "object",
  properties: { summary: { type: "string" }, score: { type: "integer" } },
  required: ["summary", "score"],
  additionalProperties: false,
};

// The latest user message picks the scenario: after a rejected reply it is the daemon's repair request.
const REPORTING = `
scenarios:
  - match: "does not fit the required output schema"
    steps:
      - text: '{"summary": "repaired", "score": 2}'
  - match: "sloppy"
    steps:
      - text: "Sure! The summary is: all good."
  - match: "fenced"
    steps:
      - text: "\`\`\`json\\n{\\"summary\\": \\"fenced\\", \\"score\\": 4}\\n\`\`\`"
steps:
  - text: '{"summary": "all good", "score": 5}'
`;

const STUBBORN = `
steps:
  - text: '{"summary": 1}'
`;

// The repair call takes a while (3 s): long enough for a kill -9 to land while it runs. After the restart it answers at once.
const slowRepair = (delayMs: number) => `
scenarios:
  - match: "does not fit the required output schema"
    steps:
      - text: '{"summary": "repaired late", "score": 3}'
        delay_ms: ${delayMs}
steps:
  - text: "Prose, not JSON."
`;
const slowStubborn = (delayMs: number) => `
scenarios:
  - match: "does not fit the required output schema"
    steps:
      - text: '{"summary": 1}'
        delay_ms: ${delayMs}
steps:
  - text: '{"summary": 1}'
`;

let p: TestProject;
let server: OpenAiLoopback;

beforeAll(async () => {
  server = await startOpenAiLoopback(() => ({
    pieces: sse([
      chunk({ role: "assistant", content: "" }, null, "gpt-test"),
      chunk({ content: '{"summary": "structured", "score": 1}' }, null, "gpt-test"),
      chunk({}, "stop", "gpt-test"),
      usageChunk(10, 5, "gpt-test"),
    ]),
  }));
  p = await createProject({
    scripts: { reporting: REPORTING, stubborn: STUBBORN, slow_repair: slowRepair(3000), slow_stubborn: slowStubborn(3000) },
    models: { structured: { provider: "openai-chat", model: "gpt-test", base_url: server.baseUrl, api_key: "x" } },
    files: {
      "schemas/report.json": JSON.stringify(REPORT),
      "agents/reporter.md": agentFile({ description: "Reports as JSON", model: "reporting", output: REPORT }),
      "agents/filed.md": agentFile({ description: "Reports by a schema file", model: "reporting", output: "schemas/report.json" }),
      "agents/crash_repair.md": agentFile({ description: "Repairs slowly", model: "slow_repair", output: REPORT }),
      "agents/crash_stubborn.md": agentFile({ description: "Never fits, slowly", model: "slow_stubborn", output: REPORT, retries: 1 }),
      "agents/stubborn.md": agentFile({ description: "Never fits", model: "stubborn", output: REPORT, retries: 1 }),
      "agents/structured.md": agentFile({ description: "Structured output", model: "structured", output: REPORT, retries: 0 }),
    },
  });
});

async function turnEvents(agent: string, run: string) {
  return (await p.events(agent)).filter((e) => e.run === run);
}

describe("output: a JSON Schema for the final reply", () => {
  it("a fitting reply completes the turn with output; the turn's view and wardrik ask --json show it", async () => {
    const { end } = await p.send("reporter", "How did it go?", "fits");
    expect(short(end.type)).toBe("turn.completed");
    expect(end.data.output).toEqual({ summary: "all good", score: 5 });

    const r = await p.cli(["ask", "filed", "How did it go?", "--json"]);
    expect(r.code, r.stderr).toBe(0);
    const turn = JSON.parse(r.stdout) as { status: string; output: unknown; reply: string };
    expect(turn.status).toBe("completed");
    expect(turn.output).toEqual({ summary: "all good", score: 5 });
    // The agent's detail shows the schema, the file's already read.
    const detail = await p.apiOk<{ output?: unknown }>("GET", `/v1/agents/${await p.agentId("filed")}`);
    expect(detail.output).toEqual(REPORT);
  });

  it("a reply in a code fence counts as its JSON", async () => {
    const { end } = await p.send("reporter", "fenced please", "fenced");
    expect(short(end.type)).toBe("turn.completed");
    expect(end.data.output).toEqual({ summary: "fenced", score: 4 });
  });

  it("a reply that does not fit goes back to the model with what is wrong, and the repaired one completes the turn", async () => {
    const { run, end } = await p.send("reporter", "sloppy answer", "repaired");
    expect(short(end.type)).toBe("turn.completed");
    expect(end.data.output).toEqual({ summary: "repaired", score: 2 });
    expect(end.data.iterations).toBe(2);
    const events = await turnEvents("reporter", run);
    const rejected = events.filter((e) => short(e.type) === "output.rejected");
    expect(rejected).toHaveLength(1);
    expect(rejected[0]!.data).toMatchObject({ iteration: 1, repairs_left: 1 });
    expect((rejected[0]!.data.problems as string[])[0]).toMatch(/^the reply is not JSON/);
    // What the model saw is in the history: its reply, the repair request, the repaired reply.
    const id = await p.agentId("reporter");
    const history = await p.apiOk<{ messages: { role: string; run?: string; content: { text?: string } }[] }>(
      "GET",
      `/v1/agents/${id}/conversations/repaired/messages`,
    );
    const texts = history.messages.filter((m) => m.run === run).map((m) => `${m.role}: ${m.content.text ?? ""}`);
    expect(texts).toHaveLength(4);
    expect(texts[2]).toMatch(/^user: Your last reply does not fit the required output schema:\n- the reply is not JSON/);

    // wardrik ask says where the streamed reply stops counting, and ends with the repaired one.
    const r = await p.cli(["ask", "reporter", "sloppy again", "--conversation", "repaired-cli"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toBe('Sure! The summary is: all good.\n{"summary": "repaired", "score": 2}\n');
    expect(r.stderr).toMatch(/✗ the reply does not fit the output schema: the reply is not JSON/);
  });

  it("a reply that never fits fails the turn with bad_output once its repairs (retries) are used", async () => {
    const { run, end } = await p.send("stubborn", "Report", "never");
    expect(short(end.type)).toBe("turn.failed");
    expect(end.data).toMatchObject({ code: "bad_output", retryable: false });
    expect(end.data.reason).toMatch(/after 1 repair: .*reply\.summary: .*"string"/);
    const rejected = (await turnEvents("stubborn", run)).filter((e) => short(e.type) === "output.rejected");
    expect(rejected.map((e) => e.data.repairs_left)).toEqual([0, 0]);
    expect(rejected[0]!.data.problems).toEqual(rejected[1]!.data.problems);
    expect((rejected[0]!.data.problems as string[]).join("\n")).toMatch(/reply needs property "score"/);

    const r = await p.cli(["ask", "stubborn", "Report", "--conversation", "never-cli"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/The turn failed: The reply does not fit the agent's output schema/);
  });

  it("a provider with structured output gets the schema as its response_format", async () => {
    const before = server.requests.length;
    const { end } = await p.send("structured", "Report", "structured");
    expect(short(end.type)).toBe("turn.completed");
    expect(end.data.output).toEqual({ summary: "structured", score: 1 });
    const format = server.requests[before]!.body?.response_format as { type: string; json_schema?: { schema?: unknown } };
    expect(format.type).toBe("json_schema");
    expect(format.json_schema?.schema).toMatchObject(REPORT);
  });

  it("wardrik schema agent describes output", async () => {
    const r = await p.cli(["schema", "agent"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/"output"/);
    expect(r.stdout).toMatch(/bad_output/);
  });
});

describe("typed answers across a crash", () => {
  it("kill -9 during a repair round: after the restart each turn ends once, with valid output or with bad_output", async () => {
    const runs: Record<string, string> = {};
    for (const name of ["crash_repair", "crash_stubborn"]) {
      await p.apiOk("POST", `/v1/agents/${await p.agentId(name)}/messages`, { text: "report" });
      // The repair request is recorded, and its model call is under way.
      const repairing = await p.waitForEvent(name, (e) => short(e.type) === "model.called" && e.data.iteration === 2);
      runs[name] = repairing.run!;
    }
    await p.kill();
    p.write("scripts/slow_repair.yaml", slowRepair(0));
    p.write("scripts/slow_stubborn.yaml", slowStubborn(0));
    await p.start();

    const repaired = await p.waitForTurnEnd("crash_repair", runs.crash_repair!);
    expect(short(repaired.type)).toBe("turn.completed");
    expect(repaired.data.output).toEqual({ summary: "repaired late", score: 3 });
    const failed = await p.waitForTurnEnd("crash_stubborn", runs.crash_stubborn!);
    expect(short(failed.type)).toBe("turn.failed");
    expect(failed.data.code).toBe("bad_output");

    for (const name of ["crash_repair", "crash_stubborn"]) {
      const events = await turnEvents(name, runs[name]!);
      expect(events.filter((e) => /^turn\.(completed|failed|cancelled)$/.test(short(e.type)))).toHaveLength(1);
    }
    // The restart gave no repair back: one rejection before the crash, and for the stubborn one (retries: 1) one after.
    expect((await turnEvents("crash_repair", runs.crash_repair!)).filter((e) => short(e.type) === "output.rejected")).toHaveLength(1);
    const rejected = (await turnEvents("crash_stubborn", runs.crash_stubborn!)).filter((e) => short(e.type) === "output.rejected");
    expect(rejected.map((e) => e.data.repairs_left)).toEqual([0, 0]);
    const view = await p.apiOk<{ status: string; output?: unknown }>(
      "GET",
      `/v1/agents/${await p.agentId("crash_repair")}/turns/${runs.crash_repair!}`,
    );
    expect(view).toMatchObject({ status: "completed", output: { summary: "repaired late", score: 3 } });
  });
});
