import { afterEach, describe, expect, it } from "vitest";
import { McpToolset } from "../../src/tools/mcp/index.js";
import { ctx, fixture, nodeServer, scope, until } from "./mcp-helpers.js";

let t: McpToolset | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

describe("MCP: notifications/tools/list_changed", () => {
  it("re-lists the tools when the server says they changed", async () => {
    t = new McpToolset("dyn", nodeServer(fixture("list-changed.mjs")));
    const names = async () => (await t!.list(scope())).map((x) => x.name);
    expect(await names()).toEqual(["dyn/add_tool", "dyn/wait"]);
    expect(await t.call("add_tool", {}, ctx())).toEqual({ ok: true, output: "added added_1" });
    await until(async () => (await names()).includes("dyn/added_1"), 5_000, "the new tool");
    expect((await t.list(scope())).find((x) => x.name === "dyn/added_1")).toMatchObject({ readOnly: true, description: "Added tool 1." });
    expect(await t.call("added_1", {}, ctx())).toEqual({ ok: true, output: "added_1" });
  });
});
