/**
 * Searching an agent's events (`GET /v1/agents/{id}/events`): `q=` finds the
 * events whose data holds a text (a message, a reply, a tool's argument),
 * ignoring the case of ASCII letters and taking `%`, `_` and quotes
 * literally; `run=` gives one turn's events. Both apply in the database,
 * before the limit, and only within the token's own org.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { agentFile, createProject, short, type TestProject, type WireEvent } from "../helpers/spawn-daemon.js";

let p: TestProject;
let id: string;
const runs: Record<string, string> = {};

interface Page {
  events: WireEvent[];
}

beforeAll(async () => {
  p = await createProject({
    scripts: {
      filer: `steps:
  - tool_calls:
      - tool: files/write
        args: { path: "notes.md", content: "{{message}}" }
  - text: "Filed."
`,
    },
    files: {
      "policies/open.yaml": "rules:\n  - tool: files/*\n    decision: allow\n",
      "agents/clerk.md": agentFile({ description: "Files notes", model: "filer", tools: ["files"], policy: "open" }),
    },
  });
  id = await p.agentId("clerk");
  const texts = {
    refund: 'Refund order ORD-77 for "Ada"',
    percent: "We are 100% sure",
    underscore: "Look at ord_under",
    plain: "Nothing to see",
  };
  for (const [name, text] of Object.entries(texts)) runs[name] = (await p.send(id, text)).run;
}, 120_000);

const search = (q: string, more = "") => p.apiOk<Page>("GET", `/v1/agents/${id}/events?q=${encodeURIComponent(q)}${more}`);

/** What q= should find: the events whose data, as JSON, holds the text, ignoring the case of ASCII letters. */
async function expected(q: string): Promise<number[]> {
  const needle = JSON.stringify(q).slice(1, -1).toLowerCase();
  return (await p.events(id)).filter((e) => JSON.stringify(e.data).toLowerCase().includes(needle)).map((e) => e.seq);
}

describe("searching events by text", () => {
  it("finds the message and the tool call's arguments, whatever the case of the letters", async () => {
    const found = await search("ord-77");
    const types = found.events.map((e) => short(e.type));
    expect(types).toContain("message.queued");
    expect(types).toContain("round.saved");
    // Every event that holds the text, and nothing else.
    expect(found.events.map((e) => e.seq)).toEqual(await expected("ord-77"));
    expect((await search("ORD-77")).events.map((e) => e.seq)).toEqual(await expected("ord-77"));
  });

  it("reads quotes, % and _ as themselves", async () => {
    for (const q of ['"Ada"', "100%", "%", "ord_"]) {
      const want = await expected(q);
      expect(want.length, q).toBeGreaterThan(0);
      expect(
        (await search(q)).events.map((e) => e.seq),
        q,
      ).toEqual(want);
    }
    // `_` is not "any character": ord_ finds ord_under's turn, not ORD-77's.
    const under = (await search("ord_")).events.filter((e) => e.run !== undefined);
    expect(new Set(under.map((e) => e.run))).toEqual(new Set([runs.underscore]));
  });

  it("applies before the limit, and with type=", async () => {
    const all = (await search("ord")).events.map((e) => e.seq);
    const paged: number[] = [];
    for (let after = 0; ;) {
      const page = await search("ord", `&limit=2&after=${after}`);
      if (page.events.length === 0) break;
      paged.push(...page.events.map((e) => e.seq));
      after = page.events.at(-1)!.seq;
    }
    expect(paged).toEqual(all);
    const queued = await search("ord", "&type=message.queued");
    expect(queued.events.map((e) => e.data.text)).toEqual(['Refund order ORD-77 for "Ada"', "Look at ord_under"]);
  });

  it("says what is wrong with an empty or overlong text", async () => {
    const empty = await p.api<{ detail: string }>("GET", `/v1/agents/${id}/events?q=`);
    expect(empty.status).toBe(400);
    expect(empty.json.detail).toMatch(/q.*must not be empty/);
    const long = await p.api<{ detail: string }>("GET", `/v1/agents/${id}/events?q=${"x".repeat(201)}`);
    expect(long.status).toBe(400);
    expect(long.json.detail).toMatch(/q.*longer than 200/);
  });
});

describe("one turn's events", () => {
  it("run= gives exactly that turn's events, in order, from turn.started to its end", async () => {
    const page = await p.apiOk<Page>("GET", `/v1/agents/${id}/events?run=${runs.percent}`);
    const all = await p.events(id);
    expect(page.events.map((e) => e.seq)).toEqual(all.filter((e) => e.run === runs.percent).map((e) => e.seq));
    expect(short(page.events[0]!.type)).toBe("turn.started");
    expect(short(page.events.at(-1)!.type)).toBe("turn.completed");
    expect(page.events.map((e) => short(e.type))).toContain("call.completed");
  });

  it("another org's token finds nothing of the agent", async () => {
    const acme = (await p.apiOk<{ token: string }>("POST", "/v1/tokens", { org: "acme", name: "searcher" })).token;
    for (const query of [`run=${runs.refund}`, "q=ORD-77"]) {
      const res = await p.api("GET", `/v1/agents/${id}/events?${query}`, undefined, { token: acme });
      expect(res.status).toBe(404);
    }
  });
});
