import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { McpToolset } from "../../src/tools/mcp/index.js";
import { ctx, fixture, nodeServer, until } from "./mcp-helpers.js";

let t: McpToolset | undefined;
let dir: string | undefined;
afterEach(async () => {
  await t?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
  t = undefined;
  dir = undefined;
});

// The fixture's `wait` tool runs until the server receives notifications/cancelled, then logs the reason.
describe("MCP: cancellation", () => {
  it("an aborted signal sends notifications/cancelled to the server", async () => {
    dir = mkdtempSync(join(tmpdir(), "wardrik-mcp-cancel-"));
    const logFile = join(dir, "cancelled.log");
    t = new McpToolset("dyn", nodeServer(fixture("list-changed.mjs"), [], { CANCEL_LOG: logFile }));
    await t.list({ org: "default", agentId: "agt_test" }); // started, so the call reaches it at once
    const controller = new AbortController();
    const pending = t.call("wait", { id: "c1" }, ctx({ signal: controller.signal }));
    // Let the request reach the server before stopping it.
    await new Promise((resolve) => setTimeout(resolve, 300));
    controller.abort(new Error("killed by a person"));
    expect(await pending).toMatchObject({ ok: false, kind: "killed", error: expect.stringMatching(/told to cancel/) });
    await until(
      () => {
        try {
          return readFileSync(logFile, "utf8").includes("c1: ");
        } catch {
          return false;
        }
      },
      5_000,
      "the server to log the cancellation",
    );
    expect(readFileSync(logFile, "utf8")).toMatch(/c1: .*killed by a person/);
  });

  it("a call whose signal is already aborted never reaches the server", async () => {
    t = new McpToolset("dyn", nodeServer(fixture("list-changed.mjs")));
    const controller = new AbortController();
    controller.abort(new Error("cancelled"));
    expect(await t.call("wait", { id: "c2" }, ctx({ signal: controller.signal }))).toMatchObject({ ok: false, kind: "killed" });
    expect(t.status({ org: "default", agentId: "agt_test" })[0]!.status).toBe("stopped");
  });
});
