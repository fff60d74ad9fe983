import { mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { McpToolset } from "../../src/tools/mcp/index.js";
import { ctx, FILESYSTEM, nodeServer, scope } from "./mcp-helpers.js";

// server-filesystem from npm over stdio, on a temporary directory.
describe("MCP: server-filesystem over stdio", () => {
  let dir: string;
  let fs: McpToolset;

  beforeAll(() => {
    dir = realpathSync(mkdtempSync(join(tmpdir(), "wardrik-mcp-fs-")));
    writeFileSync(join(dir, "hello.txt"), "hello from disk\n");
    fs = new McpToolset("fs", nodeServer(FILESYSTEM, [dir]));
  });
  afterAll(async () => {
    await fs.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it("lists the server's tools under its namespace, with schemas, descriptions and annotations", async () => {
    const tools = await fs.list(scope());
    const byName = new Map(tools.map((t) => [t.name, t]));
    expect(byName.has("fs/read_text_file")).toBe(true);
    expect(byName.has("fs/write_file")).toBe(true);
    const read = byName.get("fs/read_text_file")!;
    expect(read.readOnly).toBe(true);
    expect(read.idempotent).toBe(false); // readOnlyHint only: no idempotentHint
    expect(read.description).toMatch(/contents of a file/);
    expect(read.title).toBe("Read Text File");
    expect(read.inputSchema).toMatchObject({ type: "object", properties: { path: { type: "string" } }, required: ["path"] });
    const write = byName.get("fs/write_file")!;
    expect(write.readOnly).toBe(false);
    expect(write.idempotent).toBe(true);
    expect(byName.get("fs/list_directory")!.readOnly).toBe(true);
    expect(byName.get("fs/move_file")).toMatchObject({ readOnly: false, idempotent: false });
    expect(fs.status(scope())).toEqual([{ name: "fs", status: "up" }]);
  });

  it("runs read-only tools", async () => {
    const read = await fs.call("read_text_file", { path: join(dir, "hello.txt") }, ctx());
    // The server returns the text twice (text block and structuredContent); the model gets it once.
    expect(read).toEqual({ ok: true, output: { structured: { content: "hello from disk\n" } } });
    const ls = await fs.call("list_directory", { path: dir }, ctx());
    expect(ls.ok).toBe(true);
    expect(JSON.stringify(ls)).toContain("[FILE] hello.txt");
  });

  it("runs a writing tool, and reports the server's errors as failed calls", async () => {
    const out = await fs.call("write_file", { path: join(dir, "new.txt"), content: "written" }, ctx());
    expect(out.ok).toBe(true);
    expect(readFileSync(join(dir, "new.txt"), "utf8")).toBe("written");
    const outside = await fs.call("read_text_file", { path: "/etc/hostname" }, ctx());
    expect(outside.ok).toBe(false);
    if (!outside.ok) {
      expect(outside.kind).toBe("failed");
      expect(outside.error).toMatch(/outside allowed directories|Access denied/i);
    }
  });
});
