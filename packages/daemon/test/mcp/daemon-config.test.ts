/**
 * MCP servers from config.yaml in the real daemon (built: run `npm run build` first):
 * the namespaces reach agents, and `wardrik agent show` says which server is down and why.
 */
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { agentFile, createProject, type TestProject } from "../helpers/spawn-daemon.js";
import { FILESYSTEM, fixture } from "./mcp-helpers.js";

const SECRET = "daemon-secret-never-shown-42";
let p: TestProject;
let data: string;

beforeAll(async () => {
  data = realpathSync(mkdtempSync(join(tmpdir(), "wardrik-mcp-daemon-")));
  writeFileSync(join(data, "hello.txt"), "hello from the MCP server");
  const mcp = [
    "mcp:",
    "  fs:",
    `    command: ${JSON.stringify(process.execPath)}`,
    `    args: [${JSON.stringify(FILESYSTEM)}, ${JSON.stringify(data)}]`,
    "  broken:",
    `    command: ${JSON.stringify(process.execPath)}`,
    `    args: [${JSON.stringify(fixture("exit-at-once.mjs"))}]`,
    '    env: { FIXTURE_SECRET: "${env:FIXTURE_SECRET}" }',
    "",
  ].join("\n");
  p = await createProject({
    config: (init) => init + "\n" + mcp,
    env: { FIXTURE_SECRET: SECRET },
    // The CLI reads config.yaml too (for the address), and refuses unresolved ${env:} values.
    cliEnv: { FIXTURE_SECRET: SECRET },
    scripts: {
      reader: [
        "steps:",
        `  - tool_calls: [{ tool: fs/read_text_file, args: { path: ${JSON.stringify(join(data, "hello.txt"))} } }]`,
        '  - text: "{{result}}"',
      ].join("\n"),
    },
    files: { "agents/reader.md": agentFile({ description: "Reads through MCP", model: "reader", tools: ["fs/*", "broken/*"] }) },
  });
});
afterAll(() => rmSync(data, { recursive: true, force: true }));

describe("MCP servers in config.yaml", () => {
  it("an agent calls a read-only MCP tool without approval", async () => {
    const r = await p.cli(["ask", "reader", "read the file"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain("hello from the MCP server");
    expect(r.stderr).toMatch(/fs\/read_text_file/);
  });

  it("agent show lists each server's status, with why a server is down and no secrets", async () => {
    const r = await p.cli(["agent", "show", "reader"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/tool source fs: up/);
    expect(r.stdout).toMatch(/tool source broken: down \(command ".*" exited during startup \(exit code 3\)/);
    expect(r.stdout).toContain("fatal: cannot open database with key [redacted]");
    expect(r.stdout + p.daemonStderr()).not.toContain(SECRET);
  });

  it("wardrik mcp ls shows every server: transport, state, tool names and auth", async () => {
    const r = await p.cli(["mcp", "ls", "--json"]);
    expect(r.code, r.stderr).toBe(0);
    const servers = JSON.parse(r.stdout) as {
      name: string;
      transport: string;
      status: string;
      reason?: string;
      tools: string[];
      auth: string;
    }[];
    expect(servers.map((s) => s.name).sort()).toEqual(["broken", "fs"]);
    const fs = servers.find((s) => s.name === "fs")!;
    expect(fs).toMatchObject({ transport: "stdio", status: "up", auth: "none" });
    expect(fs.tools).toEqual(expect.arrayContaining(["read_text_file", "write_file"]));
    const broken = servers.find((s) => s.name === "broken")!;
    expect(broken).toMatchObject({ transport: "stdio", status: "down", auth: "none", tools: [] });
    expect(broken.reason).toMatch(/exited during startup \(exit code 3\)/);
    const table = await p.cli(["mcp", "ls"]);
    expect(table.stdout).toMatch(/^fs\s+stdio\s.*\bup\b/m);
    expect(table.stdout + r.stdout + p.daemonStderr()).not.toContain(SECRET);
  });
});
