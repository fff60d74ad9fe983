import { existsSync, mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { McpToolset } from "../../src/tools/mcp/index.js";
import { createHarness, types, type Harness } from "../helpers/runtime-harness.js";
import { EVERYTHING, FILESYSTEM, nodeServer, until } from "./mcp-helpers.js";

let h: Harness | undefined;
let dir: string;
let toolsets: McpToolset[] = [];
beforeEach(() => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), "wardrik-mcp-e2e-")));
  writeFileSync(join(dir, "hello.txt"), "hello from disk");
});
afterEach(async () => {
  await h?.close();
  await Promise.all(toolsets.map((t) => t.close()));
  rmSync(dir, { recursive: true, force: true });
  h = undefined;
  toolsets = [];
});

const call = (tool: string, args: Record<string, unknown> = {}) => ({ tool, args });

// Through the real runtime with the bare default policy: read-only MCP tools run, others wait for a person.
describe("MCP tools in the turn loop", () => {
  it("runs a read-only tool at once; a writing tool waits for approval, then runs", async () => {
    const fs = new McpToolset("fs", nodeServer(FILESYSTEM, [dir]));
    toolsets.push(fs);
    h = await createHarness({ toolsets: [fs], policy: null });
    const target = join(dir, "out.txt");
    const a = await h.agent({
      name: "a",
      tools: ["fs/*"],
      script: {
        steps: [
          { tool_calls: [call("fs/read_text_file", { path: join(dir, "hello.txt") })] },
          { tool_calls: [call("fs/write_file", { path: target, content: "from the agent" })] },
          { text: "done: {{result}}" },
        ],
      },
    });
    const q = await h.runtime.enqueue(a, "main", "copy it");

    const asked = await h.waitFor((e) => e.type === "dev.wardrik.approval.requested", 20_000);
    expect(asked.data).toMatchObject({ tool: "fs/write_file", args: { path: target, content: "from the agent" } });
    await h.waitFor((e) => e.type === "dev.wardrik.turn.parked");
    expect(existsSync(target)).toBe(false);

    // The read ran without approval, and its result reached the model.
    const read = h.events.find((e) => e.type === "dev.wardrik.call.completed" && e.data.tool === "fs/read_text_file");
    expect(read?.data.output).toEqual({ structured: { content: "hello from disk" } });
    const decided = h.events.filter((e) => e.type === "dev.wardrik.call.decided").map((e) => [e.data.tool, e.data.decision]);
    expect(decided).toEqual([
      ["fs/read_text_file", "allow"],
      ["fs/write_file", "ask"],
    ]);
    // The model saw the tools as fs__name, with the server's schema.
    const model = h.models.get("a")!;
    const offered = model.calls[0]!.tools!.map((t) => t.name);
    expect(offered).toContain("fs__read_text_file");
    expect(offered).toContain("fs__write_file");
    const schema = model.calls[0]!.tools!.find((t) => t.name === "fs__write_file");
    expect(schema && "inputSchema" in schema ? schema.inputSchema : undefined).toMatchObject({
      properties: { path: { type: "string" }, content: { type: "string" } },
    });

    await h.runtime.approve(a, String(asked.data.call));
    const end = await h.waitFor((e) => e.type === "dev.wardrik.turn.completed", 20_000);
    expect(readFileSync(target, "utf8")).toBe("from the agent");
    expect(end.data.reply).toMatch(/done: .*Successfully wrote to/);
    expect(types(h.events, end.run)).toEqual(
      expect.arrayContaining(["approval.requested", "approval.granted", "call.completed", "turn.completed"]),
    );
    expect(q.message).toMatch(/^msg_/);
  });

  it("an agent that falls asleep releases the server; with no other agent holding it, it stops", async () => {
    const fs = new McpToolset("fs", nodeServer(FILESYSTEM, [dir]), { stopGraceMs: 0 });
    toolsets.push(fs);
    h = await createHarness({ toolsets: [fs], policy: null });
    const a = await h.agent({
      name: "a",
      tools: ["fs/*"],
      idle_timeout: 0.2,
      script: { steps: [{ tool_calls: [call("fs/list_directory", { path: dir })] }, { text: "{{result}}" }] },
    });
    const end = await h.ask(a, "list");
    expect(end.data.reply).toContain("hello.txt");
    expect(fs.status({ org: "default", agentId: a.id })[0]!.status).toBe("up");
    await h.waitFor((e) => e.type === "dev.wardrik.agent.asleep", 10_000);
    await until(() => fs.status({ org: "default", agentId: a.id })[0]!.status === "stopped", 5_000, "the server to stop");
    expect(fs.holderIds()).toEqual([]);
  });

  it("a person's kill stops a running MCP call, and the turn goes on", async () => {
    const everything = new McpToolset("everything", nodeServer(EVERYTHING, ["stdio"]));
    toolsets.push(everything);
    h = await createHarness({ toolsets: [everything], policy: null });
    const a = await h.agent({
      name: "a",
      tools: ["everything/*"],
      script: {
        steps: [
          { tool_calls: [call("everything/trigger-long-running-operation", { duration: 30, steps: 3 })] },
          { text: "after: {{result}}" },
        ],
      },
    });
    const done = h.ask(a, "go");
    const started = await h.waitFor((e) => e.type === "dev.wardrik.call.started", 20_000);
    await new Promise((resolve) => setTimeout(resolve, 200));
    await h.runtime.kill(a, String(started.data.call));
    const end = await done;
    expect(end.type).toBe("dev.wardrik.turn.completed");
    expect(types(h.events, end.run)).toContain("call.killed");
    expect(everything.status({ org: "default", agentId: a.id })[0]!.status).toBe("up");
  });

  it("the call timeout applies to MCP calls", async () => {
    const everything = new McpToolset("everything", nodeServer(EVERYTHING, ["stdio"]));
    toolsets.push(everything);
    h = await createHarness({ toolsets: [everything], policy: null, toolTimeoutMs: 500 });
    const a = await h.agent({
      name: "a",
      tools: ["everything/*"],
      script: {
        steps: [
          { tool_calls: [call("everything/trigger-long-running-operation", { duration: 30, steps: 3 })] },
          { text: "after: {{result}}" },
        ],
      },
    });
    // Start the server first: the timeout is for the call, not the server's start.
    await everything.list({ org: "default", agentId: a.id });
    const end = await h.ask(a, "go");
    expect(end.type).toBe("dev.wardrik.turn.completed");
    // A timeout is a timeout (not a person's kill), and the model is told how long the call had.
    // The tool is read-only, so it is tried once more with the same key before it fails.
    const timedOut = h.events.filter((e) => e.type === "dev.wardrik.call.timed_out");
    expect(timedOut.map((e) => e.data.will_retry)).toEqual([true, false]);
    expect(timedOut[1]!.data).toMatchObject({ code: "timeout", retryable: true, timeout_s: 0.5, attempt: 2 });
    expect(String(timedOut[1]!.data.error)).toMatch(/timed out after 0\.5 s/);
    expect(h.events.some((e) => e.type === "dev.wardrik.call.killed")).toBe(false);
  });
});
