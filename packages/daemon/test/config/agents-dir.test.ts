import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { loadAgentsDir } from "../../src/config/index.js";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(tmpdir(), "wardrik-agents-"));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

function write(name: string, text: string): void {
  mkdirSync(path.join(dir, "agents"), { recursive: true });
  writeFileSync(path.join(dir, "agents", name), text);
}

describe("loadAgentsDir", () => {
  it("returns nothing when agents/ does not exist", () => {
    expect(loadAgentsDir(dir)).toEqual([]);
  });

  it("loads the good file and reports the bad one, sorted by file name", () => {
    write("triage.md", "---\ndescription: Sorts tickets\n---\nSort them.\n");
    write("broken.md", "---\ndescription: d\nmax_iteratons: 3\n---\n");
    const results = loadAgentsDir(dir);
    expect(results.map((r) => r.file)).toEqual(["agents/broken.md", "agents/triage.md"]);

    const [broken, triage] = results;
    expect(broken).toEqual({
      name: "broken",
      file: "agents/broken.md",
      error: expect.stringMatching(/^agents\/broken\.md:3: key "max_iteratons" is not allowed/),
    });
    expect(broken?.definition).toBeUndefined();
    expect(triage?.error).toBeUndefined();
    expect(triage?.definition).toMatchObject({ name: "triage", description: "Sorts tickets", instructions: "Sort them." });
  });

  it("skips non-.md files, hidden files and directories", () => {
    write("notes.txt", "not an agent");
    write("a.md.bak", "not an agent");
    write(".#a.md", "an editor lock file");
    mkdirSync(path.join(dir, "agents", "sub.md"));
    write("a.md", "---\ndescription: d\n---\n");
    expect(loadAgentsDir(dir).map((r) => r.name)).toEqual(["a"]);
  });

  it("reports an invalid file name as that file's error", () => {
    write("bad name.md", "---\ndescription: d\n---\n");
    write("ok.md", "---\ndescription: d\n---\n");
    const [bad, ok] = loadAgentsDir(dir);
    expect(bad).toMatchObject({ name: "bad name", error: expect.stringContaining("must be 1-55 letters") });
    expect(ok?.definition?.name).toBe("ok");
  });
});
