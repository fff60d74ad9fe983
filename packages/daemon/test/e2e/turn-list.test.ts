/**
 * A conversation's turns (`GET /v1/agents/{id}/conversations/{key}/turns`):
 * newest first, a page at a time, each with its status, times, model calls,
 * spend and the start of what it was asked; only the token's own org sees them.
 */
import type { TurnList, TurnView } from "@wardrik/protocol";
import { beforeAll, describe, expect, it } from "vitest";
import { agentFile, createProject, type TestProject } from "../helpers/spawn-daemon.js";

let p: TestProject;
let id: string;
const runs: string[] = [];
const LONG = `Please reconcile ${"the ledger ".repeat(40)}today`;

beforeAll(async () => {
  p = await createProject({
    // 1000 input and 500 output tokens at $100 and $200 a million: $0.20 a model call.
    scripts: { booked: "steps:\n  - text: Booked.\n    usage: { input: 1000, output: 500 }\n" },
    models: { paid: { provider: "script", model: "booked", price: { input: 100, output: 200 } } },
    files: { "agents/ledger.md": agentFile({ description: "Keeps the books", model: "paid" }) },
  });
  id = await p.agentId("ledger");
  for (const text of ["Book invoice 1", "Book invoice 2", LONG]) runs.push((await p.send(id, text, "books")).run);
  await p.send(id, "Something else", "main");
}, 120_000);

describe("a conversation's turns", () => {
  it("newest first, with status, times, model calls, spend and the start of the first message", async () => {
    const list = await p.apiOk<TurnList>("GET", `/v1/agents/${id}/conversations/books/turns`);
    expect(list.turns.map((t) => t.id)).toEqual([...runs].reverse());
    expect(list.next).toBeNull();
    const [newest, , oldest] = list.turns;
    expect(oldest).toMatchObject({
      conversation: "books",
      status: "completed",
      iterations: 1,
      spend_usd: 0.2,
      parked_ms: 0,
      first_message: "Book invoice 1",
    });
    expect(Date.parse(oldest!.ended_at!)).toBeGreaterThanOrEqual(Date.parse(oldest!.started_at));
    // A long message shows its first 200 characters.
    expect(newest!.first_message).toBe(LONG.slice(0, 200));
    // The turn's own view carries the same figures.
    const view = await p.apiOk<TurnView>("GET", `/v1/agents/${id}/turns/${runs[0]}`);
    expect(view).toMatchObject({ spend_usd: 0.2, parked_ms: 0, iterations: 1, status: "completed" });
  });

  it("pages back with the cursor, and refuses a cursor of another list", async () => {
    const first = await p.apiOk<TurnList>("GET", `/v1/agents/${id}/conversations/books/turns?limit=2`);
    expect(first.turns.map((t) => t.id)).toEqual([runs[2], runs[1]]);
    expect(first.next).not.toBeNull();
    const second = await p.apiOk<TurnList>(
      "GET",
      `/v1/agents/${id}/conversations/books/turns?limit=2&cursor=${encodeURIComponent(first.next!)}`,
    );
    expect(second.turns.map((t) => t.id)).toEqual([runs[0]]);
    expect(second.next).toBeNull();
    const agents = await p.apiOk<{ next: string | null }>("GET", "/v1/agents?limit=1");
    const wrong = await p.api<{ detail: string }>(
      "GET",
      `/v1/agents/${id}/conversations/books/turns?cursor=${encodeURIComponent(agents.next!)}`,
    );
    expect(wrong.status).toBe(400);
    expect(wrong.json.detail).toContain("cursor");
  });

  it("another conversation's turns stay in it; an unknown conversation is a 404 that names it", async () => {
    const main = await p.apiOk<TurnList>("GET", `/v1/agents/${id}/conversations/main/turns`);
    expect(main.turns).toHaveLength(1);
    expect(main.turns[0]!.first_message).toBe("Something else");
    const missing = await p.api<{ detail: string }>("GET", `/v1/agents/${id}/conversations/nope/turns`);
    expect(missing.status).toBe(404);
    expect(missing.json.detail).toContain("no conversation nope");
  });

  it("another org's token sees no such agent", async () => {
    const acme = (await p.apiOk<{ token: string }>("POST", "/v1/tokens", { org: "acme", name: "reader" })).token;
    const res = await p.api("GET", `/v1/agents/${id}/conversations/books/turns`, undefined, { token: acme });
    expect(res.status).toBe(404);
  });
});
