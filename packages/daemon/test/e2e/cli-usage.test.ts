/**
 * CLI exit codes for usage errors (SPEC 11: "2 for usage errors"). These need no
 * daemon: a usage error is caught before any request is made.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runWardrik } from "../helpers/spawn-daemon.js";

const tmp = mkdtempSync(join(tmpdir(), "wardrik-e2e-usage-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const cases: [string, string[], RegExp][] = [
  ["an unknown command", ["frobnicate"], /unknown command/],
  ["an unknown ls filter", ["ls", "everything"], /unknown filter/],
  ["init without a directory", ["init"], /missing required argument/],
  ["ask without a message", ["ask", "helper"], /missing required argument 'message'/],
  ["an unknown option", ["ls", "--bogus"], /unknown option '--bogus'/],
  ["a bad --port", ["daemon", "--port", "seventy"], /port/],
  ["a bad --retry-for", ["ask", "helper", "hi", "--retry-for", "soon"], /--retry-for must be a number of seconds \(0 or more\), got soon/],
];

describe("usage errors exit 2 with a message on stderr", () => {
  it.concurrent.each(cases)("%s", async (_what, args, message) => {
    const r = await runWardrik(args, { cwd: tmp });
    expect(r.stderr).toMatch(message);
    expect(r.stdout).toBe("");
    expect(r.code).toBe(2);
  });

  it("--help exits 0 and lists the commands", async () => {
    const r = await runWardrik(["--help"], { cwd: tmp });
    expect(r.code).toBe(0);
    for (const c of ["init", "daemon", "reload", "ask", "ls", "agent", "events"]) expect(r.stdout).toContain(c);
  });
});
