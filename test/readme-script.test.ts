/** The README's example script for the scripted model is a valid script, so the documented format cannot drift from the parser. */
import { readFileSync } from "node:fs";
import * as sdk from "@wardrik/sdk";
import * as testing from "@wardrik/testing";
import { parseScript } from "@wardrik/testing";
import { expect, test } from "vitest";

test("the README's scripted model example parses, with the keys it documents", () => {
  const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8");
  const section = readme.slice(readme.indexOf("## The scripted model"));
  const yaml = /```yaml\n([\s\S]*?)```/.exec(section)?.[1];
  expect(yaml).toBeDefined();
  const script = parseScript(yaml!, "README.md");
  expect(script.scenarios?.[0]).toMatchObject({
    match: "refund|order",
    steps: [{ tool_calls: [{ tool: "workers/find_order" }] }, { text: "Found: {{result}}" }],
  });
  expect(script.steps).toEqual([{ text: "You said: {{message}}" }]);
});

test("the SDK README places invokeTool in @wardrik/sdk, which exports it (the testing package does not)", () => {
  const readme = readFileSync(new URL("../packages/sdk/README.md", import.meta.url), "utf8");
  expect(readme).toContain('import { invokeTool } from "@wardrik/sdk";');
  expect(readme).toMatch(/`invokeTool\(tool, args, ctx\)`, from `@wardrik\/sdk` itself/);
  expect(typeof sdk.invokeTool).toBe("function");
  expect("invokeTool" in testing).toBe(false);
});

test("the README says how long the global install takes and why: SQLite's driver compiled when no prebuilt binary can be fetched", () => {
  const readme = readFileSync(new URL("../README.md", import.meta.url), "utf8");
  // One space for every run of white space: the facts do not depend on where the lines break.
  const install = readme.slice(readme.indexOf("## Install and run"), readme.indexOf("## A project")).replace(/\s+/g, " ");
  expect(install).not.toContain("a minute or two");
  expect(install).toMatch(/\*\*How long the global install takes\.\*\*/);
  for (const fact of [
    "better-sqlite3",
    "prebuilt binary",
    "node-gyp",
    "2 minutes of CPU time",
    "9 to 16 minutes",
    "--foreground-scripts",
    "python3",
  ])
    expect(install).toContain(fact);
});
