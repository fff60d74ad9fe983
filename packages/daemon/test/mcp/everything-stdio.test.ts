import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { McpToolset } from "../../src/tools/mcp/index.js";
import { ctx, EVERYTHING, nodeServer, scope } from "./mcp-helpers.js";

// server-everything from npm over stdio: the MCP reference server for clients.
describe("MCP: server-everything over stdio", () => {
  let everything: McpToolset;

  beforeAll(() => {
    everything = new McpToolset("everything", nodeServer(EVERYTHING, ["stdio"]));
  });
  afterAll(async () => {
    await everything.close();
  });

  it("lists tools with their annotations", async () => {
    const tools = await everything.list(scope());
    const byName = new Map(tools.map((t) => [t.name, t]));
    expect(byName.get("everything/echo")).toMatchObject({
      readOnly: true,
      idempotent: true,
      description: "Echoes back the input string",
      title: "Echo Tool",
    });
    expect(byName.get("everything/toggle-simulated-logging")).toMatchObject({ readOnly: false });
    // Names with "-" are valid model names: the model sees everything__get-tiny-image.
    expect(byName.has("everything/get-tiny-image")).toBe(true);
  });

  it("passes text results on as text", async () => {
    expect(await everything.call("echo", { message: "hi" }, ctx())).toEqual({ ok: true, output: "Echo: hi" });
  });

  it("passes structured content on as structured output", async () => {
    const out = await everything.call("get-structured-content", { location: "Chicago" }, ctx());
    expect(out).toEqual({ ok: true, output: { structured: { temperature: 36, conditions: "Light rain / drizzle", humidity: 82 } } });
  });

  it("describes images instead of dropping them", async () => {
    const out = await everything.call("get-tiny-image", {}, ctx());
    expect(out.ok).toBe(true);
    if (!out.ok) return;
    const output = out.output as { text: string; attachments: { type: string; mime_type: string; bytes: number }[] };
    expect(output.text).toBe("Here's the image you requested:\nThe image above is the MCP logo.");
    expect(output.attachments).toHaveLength(1);
    expect(output.attachments[0]).toMatchObject({ type: "image", mime_type: "image/png" });
    expect(output.attachments[0]!.bytes).toBeGreaterThan(100);
  });

  it("passes embedded resources and resource links on", async () => {
    const ref = await everything.call("get-resource-reference", { resourceType: "Text", resourceId: 2 }, ctx());
    expect(ref.ok).toBe(true);
    expect(JSON.stringify(ref)).toMatch(/"type":"resource","uri":"demo:\/\/resource\/dynamic\/text\/2"/);
    const links = await everything.call("get-resource-links", { count: 2 }, ctx());
    expect(links.ok).toBe(true);
    if (links.ok)
      expect((links.output as { attachments: { type: string }[] }).attachments.map((a) => a.type)).toEqual([
        "resource_link",
        "resource_link",
      ]);
  });

  it("turns isError results into failed calls with the server's message", async () => {
    const out = await everything.call("get-sum", { a: "one", b: 2 }, ctx());
    expect(out.ok).toBe(false);
    if (!out.ok) {
      expect(out.kind).toBe("failed");
      expect(out.error).toMatch(/Input validation error|expected number/i);
    }
  });

  it("stops a long-running call when its signal aborts, and the server stays usable", async () => {
    const controller = new AbortController();
    const started = Date.now();
    const pending = everything.call("trigger-long-running-operation", { duration: 10, steps: 5 }, ctx({ signal: controller.signal }));
    setTimeout(() => controller.abort(new Error("killed by a person")), 200);
    const out = await pending;
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(out).toMatchObject({ ok: false, kind: "killed" });
    expect(await everything.call("echo", { message: "still here" }, ctx())).toEqual({ ok: true, output: "Echo: still here" });
    expect(everything.status(scope())[0]!.status).toBe("up");
  });
});
