/** The README's example script for the scripted model is a valid script, so the documented format cannot drift from the parser. */
import { readFileSync } from "node:fs";
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
