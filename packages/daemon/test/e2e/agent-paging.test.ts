/**
 * GET /v1/agents pages: `limit` agents at a time, ordered by name, with a
 * `next` cursor until the last page. Pages are keyset pages, so agents made
 * while a client pages neither repeat nor shift what it has seen.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { createProject, type TestProject } from "../helpers/spawn-daemon.js";

let p: TestProject;
const names: string[] = [];

interface Page {
  agents: { id: string; name: string; status: string }[];
  next: string | null;
}

beforeAll(async () => {
  p = await createProject({ remove: ["agents/helper.md"] });
  // 105: more than one page at the default size (100). Made in shuffled order, so the
  // order of the pages comes from the names, not from when the agents were made.
  const made = Array.from({ length: 105 }, (_, i) => `agent-${String(i).padStart(3, "0")}`);
  const shuffled = made.map((n, i) => ({ n, k: (i * 37) % 105 })).sort((a, b) => a.k - b.k);
  for (let i = 0; i < shuffled.length; i += 15) {
    await Promise.all(
      shuffled.slice(i, i + 15).map(({ n }) => p.apiOk("POST", "/v1/agents", { name: n, description: "paged", model: "script/echo" })),
    );
  }
  names.push(...made);
});

async function pageThrough(limit?: number): Promise<Page[]> {
  const pages: Page[] = [];
  let cursor: string | null = null;
  do {
    const params = new URLSearchParams();
    if (limit !== undefined) params.set("limit", String(limit));
    if (cursor) params.set("cursor", cursor);
    const qs = params.toString();
    const page: Page = await p.apiOk<Page>("GET", `/v1/agents${qs ? `?${qs}` : ""}`);
    pages.push(page);
    cursor = page.next;
  } while (cursor);
  return pages;
}

describe("paging through GET /v1/agents", () => {
  it("gives 100 agents by default, then the rest, in name order, each once", async () => {
    const pages = await pageThrough();
    expect(pages.map((pg) => pg.agents.length)).toEqual([100, 5]);
    expect(pages.flatMap((pg) => pg.agents.map((a) => a.name))).toEqual(names);
    expect(pages[0]!.next).toEqual(expect.any(String));
    expect(pages[1]!.next).toBeNull();
  });

  it("honours limit, and the last page has next: null even when it is full", async () => {
    const tens = await pageThrough(10);
    expect(tens.map((pg) => pg.agents.length)).toEqual([...Array<number>(10).fill(10), 5]);
    expect(tens.flatMap((pg) => pg.agents.map((a) => a.name))).toEqual(names);
    const exact = await pageThrough(35);
    expect(exact.map((pg) => pg.agents.length)).toEqual([35, 35, 35]);
    expect(exact.at(-1)!.next).toBeNull();
    const all = await pageThrough(1000);
    expect(all).toHaveLength(1);
    expect(all[0]!.agents).toHaveLength(105);
  });

  it("is stable while agents are made between pages: nothing repeats, a later name still comes", async () => {
    const first = await p.apiOk<Page>("GET", "/v1/agents?limit=50");
    await p.apiOk("POST", "/v1/agents", { name: "aaa-early", description: "before the cursor", model: "script/echo" });
    await p.apiOk("POST", "/v1/agents", { name: "zzz-late", description: "after the cursor", model: "script/echo" });
    const seen = first.agents.map((a) => a.name);
    let cursor = first.next;
    while (cursor) {
      const page: Page = await p.apiOk<Page>("GET", `/v1/agents?limit=50&cursor=${encodeURIComponent(cursor)}`);
      seen.push(...page.agents.map((a) => a.name));
      cursor = page.next;
    }
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen).toContain("zzz-late");
    expect(seen).not.toContain("aaa-early");
    await p.apiOk("DELETE", `/v1/agents/${await p.agentId("aaa-early")}`);
    await p.apiOk("DELETE", `/v1/agents/${await p.agentId("zzz-late")}`);
  });

  it("?name= finds one agent with next: null", async () => {
    const r = await p.apiOk<Page>("GET", "/v1/agents?name=agent-042");
    expect(r.agents.map((a) => a.name)).toEqual(["agent-042"]);
    expect(r.next).toBeNull();
    expect(await p.apiOk<Page>("GET", "/v1/agents?name=nobody")).toEqual({ agents: [], next: null });
  });

  it("a cursor it did not give out, or a limit out of range, is 400", async () => {
    for (const q of ["cursor=not-a-cursor", "cursor=", "limit=0", "limit=1001", "limit=2.5"]) {
      const r = await p.api<{ code: string; detail: string }>("GET", `/v1/agents?${q}`);
      expect(r.status, q).toBe(400);
      expect(r.json.detail, q).toMatch(/query parameter (cursor|limit)/);
    }
  });
});
