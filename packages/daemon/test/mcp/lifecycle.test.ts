import { afterEach, describe, expect, it } from "vitest";
import { McpToolset } from "../../src/tools/mcp/index.js";
import { ctx, fixture, nodeServer, scope, sleep, until } from "./mcp-helpers.js";

let open: McpToolset[] = [];
afterEach(async () => {
  await Promise.all(open.map((t) => t.close()));
  open = [];
});
function paged(options: ConstructorParameters<typeof McpToolset>[2] = {}): McpToolset {
  const t = new McpToolset("paged", nodeServer(fixture("paged.mjs")), options);
  open.push(t);
  return t;
}
const listRequests = async (t: McpToolset, agent = "agt_test") => {
  const out = await t.call("stats", {}, ctx({ agent }));
  return out.ok ? Number(out.output) : NaN;
};

// When servers run: started by an awake agent's first use, stopped when no awake agent holds them.
describe("MCP: server lifecycle", () => {
  it("starts nothing until an agent needs the server", async () => {
    const t = paged();
    expect(t.status(scope())).toEqual([
      { name: "paged", status: "stopped", reason: "not running; it starts when an awake agent needs it" },
    ]);
    await sleep(50);
    expect(t.status(scope())[0]!.status).toBe("stopped");
    await t.list(scope("agt_a"));
    expect(t.status(scope())[0]!.status).toBe("up");
    expect(t.holderIds()).toEqual(["agt_a"]);
  });

  it("follows tools/list pages, and answers later lists from its cache", async () => {
    const t = paged();
    const first = await t.list(scope());
    expect(first.map((x) => x.name)).toEqual([
      "paged/plain",
      "paged/reader",
      "paged/upsert",
      "paged/both",
      "paged/stats",
      "paged/sleep",
      "paged/mixed",
    ]);
    // 8 tools in pages of 2: 4 requests. Many more lists (one per model step) send none.
    for (let i = 0; i < 20; i++) await t.list(scope());
    expect(await listRequests(t)).toBe(4);
  });

  it("maps annotations: only explicit hints count, and names providers refuse are skipped", async () => {
    const tools = new Map((await paged().list(scope())).map((x) => [x.name, x]));
    expect(tools.get("paged/plain")).toMatchObject({ readOnly: false, idempotent: false, description: "No annotations." });
    expect(tools.get("paged/reader")).toMatchObject({ readOnly: true, idempotent: false, title: "Reader" });
    expect(tools.get("paged/upsert")).toMatchObject({ readOnly: false, idempotent: true });
    expect(tools.get("paged/both")).toMatchObject({ readOnly: true, idempotent: true });
    expect(tools.get("paged/reader")!.inputSchema).toEqual({
      type: "object",
      properties: { q: { type: "string", description: "A query" } },
      required: ["q"],
    });
    expect(tools.has("paged/bad.name")).toBe(false);
  });

  it("stops the server when the last agent releases it, and starts it again on the next use", async () => {
    const t = paged({ stopGraceMs: 0 });
    await t.list(scope("agt_a"));
    await t.list(scope("agt_b"));
    const pidA = await t.call("plain", { q: "x" }, ctx({ agent: "agt_a" }));
    t.release(scope("agt_a"));
    expect(t.status(scope())[0]!.status).toBe("up"); // agt_b still holds it
    t.release(scope("agt_b"));
    expect(t.status(scope())[0]!.status).toBe("stopped");
    expect(t.holderIds()).toEqual([]);
    // The tools stay known while it is stopped; a list starts it again in the background.
    expect((await t.list(scope("agt_a"))).length).toBe(7);
    await until(() => t.status(scope())[0]!.status === "up", 10_000, "restart");
    expect(await t.call("plain", { q: "y" }, ctx({ agent: "agt_a" }))).toEqual({ ok: true, output: 'called plain with {"q":"y"}' });
    expect(pidA.ok).toBe(true);
  });

  it("keeps the server running for a grace period, so an agent that comes straight back finds it up", async () => {
    const t = paged({ stopGraceMs: 300 });
    await t.list(scope("agt_a"));
    t.release(scope("agt_a"));
    await sleep(100);
    await t.list(scope("agt_b"));
    await sleep(300);
    expect(t.status(scope())[0]!.status).toBe("up");
    t.release(scope("agt_b"));
    await until(() => t.status(scope())[0]!.status === "stopped", 2_000, "stop after grace");
  });

  it("lets go of agents that stopped using it without a release, but not while their call runs", async () => {
    const t = paged({ stopGraceMs: 0, holderIdleMs: 200 });
    await t.list(scope("agt_idle"));
    expect(t.holderIds()).toEqual(["agt_idle"]);
    // A call longer than holderIdleMs keeps its agent holding the server.
    expect(await t.call("sleep", { ms: 600 }, ctx({ agent: "agt_idle" }))).toEqual({ ok: true, output: "slept" });
    expect(t.status(scope())[0]!.status).toBe("up");
    await until(() => t.holderIds().length === 0, 2_000, "idle holder dropped");
    expect(t.status(scope())[0]!.status).toBe("stopped");
  });

  it("close stops the server and refuses further calls", async () => {
    const t = paged();
    await t.list(scope());
    await t.close();
    expect(t.status(scope())[0]!.status).toBe("stopped");
    expect(await t.call("plain", { q: "x" }, ctx())).toMatchObject({
      ok: false,
      kind: "unavailable",
      error: expect.stringMatching(/shut down/),
    });
  });

  it("describes every content type instead of dropping any", async () => {
    const out = await paged().call("mixed", {}, ctx());
    expect(out).toEqual({
      ok: true,
      output: {
        text: "first\nsecond",
        attachments: [
          { type: "audio", mime_type: "audio/wav", bytes: 300, note: expect.any(String) },
          { type: "resource", uri: "file:///notes.txt", mime_type: "text/plain", text: "note body" },
          { type: "resource", uri: "file:///blob.bin", mime_type: "application/octet-stream", bytes: 10, note: expect.any(String) },
          { type: "resource_link", uri: "file:///big.csv", name: "big.csv", mime_type: "text/csv", bytes: 12345 },
        ],
      },
    });
  });
});
