/**
 * config.yaml `limits.json_depth` is the one bound on nesting everywhere: set
 * to 8, a request body, a worker's frame, a model's tool arguments and an MCP
 * server's result nested 9 deep are each refused with what is wrong, while 8
 * levels pass.
 */
import { fileURLToPath } from "node:url";
import { beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { WORKER_PROTOCOL_VERSION } from "@wardrik/protocol";
import { agentFile, createProject, short, type TestProject } from "../helpers/spawn-daemon.js";

const DEEP_MCP = fileURLToPath(new URL("./fixtures/deep-mcp.mjs", import.meta.url));
/** `levels` containers inside one another: `[[...]]`. */
const nested = (levels: number) => "[".repeat(levels) + "]".repeat(levels);

// One round: MCP results 9 and 8 deep (the result's object around structured content 8 and 7 deep), tool
// arguments 9 deep (the object and 8 arrays); then an answer.
const SCRIPT = `steps:
  - tool_calls:
      - { tool: deep/nest, args: { levels: 8 } }
      - { tool: deep/nest, args: { levels: 7 } }
      - { tool: files/read, args: { path: ${nested(8)} } }
  - text: done
`;

let p: TestProject;

beforeAll(async () => {
  p = await createProject({
    scripts: { nester: SCRIPT },
    config: (text) =>
      `${text.replace(/\n?$/, "\n")}limits:\n  json_depth: 8\nmcp:\n  deep:\n    command: ${JSON.stringify(process.execPath)}\n    args: [${JSON.stringify(DEEP_MCP)}]\n`,
    files: {
      "agents/nester.md": agentFile({ description: "Calls deep tools", model: "nester", tools: ["deep/*", "files"], policy: "open" }),
      "policies/open.yaml": 'description: Everything runs.\nrules:\n  - tool: "*"\n    decision: allow\n',
    },
  });
});

describe("limits.json_depth: 8", () => {
  it("a request body 9 deep is 400 json_too_deep; 8 deep gets past the parse to the route's own check", async () => {
    const id = await p.agentId("nester");
    const send = (conversation: string) =>
      p.api<{ code: string; detail: string }>("POST", `/v1/agents/${id}/messages`, undefined, {
        raw: `{"text":"x","conversation":${conversation}}`,
        headers: { "content-type": "application/json" },
      });
    const deep = await send(nested(8));
    expect(deep.status).toBe(400);
    expect(deep.json.code).toBe("json_too_deep");
    expect(deep.json.detail).toContain("deeper than 8 levels (at character 34)");
    const fits = await send(nested(7));
    expect(fits.status).toBe(400);
    expect(fits.json.code).toBe("bad_request");
    expect(fits.json.detail).toContain("body.conversation");
  });

  it("a worker frame 9 deep closes the connection; 8 deep is read", async () => {
    const ws = new WebSocket(p.url.replace(/^http/, "ws") + "/v1/workers", { headers: { authorization: `Bearer ${p.token}` } });
    const frames: string[] = [];
    ws.on("message", (data) => frames.push(String(data)));
    const closed = new Promise<{ code: number; reason: string }>((resolve) =>
      ws.once("close", (code, reason) => resolve({ code, reason: reason.toString() })),
    );
    await new Promise<void>((resolve, reject) => {
      ws.once("open", () => resolve());
      ws.once("error", reject);
    });
    ws.send(JSON.stringify({ type: "hello", protocol: WORKER_PROTOCOL_VERSION, name: "nester", instance: "n-1", sdk: "raw" }));
    // The frame itself is one level: its output may hold 7 more.
    ws.send(`{"type":"result","callId":"call_none","attempt":1,"ok":true,"output":${nested(7)}}`);
    ws.send(`{"type":"result","callId":"call_none","attempt":1,"ok":true,"output":${nested(8)}}`);
    const { code, reason } = await closed;
    expect(code).toBe(1008);
    expect(reason).toContain("The message nests objects and arrays deeper than 8 levels");
    // Exactly one error frame: the first result was read (and dropped as late), the second refused.
    expect(frames.filter((f) => f.includes('"type":"error"'))).toHaveLength(1);
  });

  it("a model's tool arguments 9 deep fail that call; an MCP result 9 deep fails its call, 8 deep completes", async () => {
    const { end } = await p.send("nester", "go", "main", 60_000);
    expect(short(end.type)).toBe("turn.completed");
    const events = await p.events("nester");
    const decided = events.filter((e) => short(e.type) === "call.failed" || short(e.type) === "call.completed");
    const byTool = (tool: string) => decided.filter((e) => e.data.tool === tool).map((e) => ({ type: short(e.type), ...e.data }));
    expect(byTool("files/read")).toEqual([
      expect.objectContaining({
        type: "call.failed",
        error: expect.stringContaining("The JSON of the arguments nests objects and arrays deeper than 8 levels") as unknown,
      }),
    ]);
    const nests = byTool("deep/nest");
    expect(nests.map((n) => n.type).sort()).toEqual(["call.completed", "call.failed"]);
    expect(nests.find((n) => n.type === "call.failed")).toMatchObject({
      error: expect.stringContaining("The result of deep/nest nests objects and arrays deeper than 8 levels") as unknown,
    });
  });
});
