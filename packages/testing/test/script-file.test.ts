import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ScriptFileError, createScriptedModel, loadScriptFile, parseScript } from "@wardrik/testing";

const VALID = `
description: Triage demo
delay_ms: 5
scenarios:
  - match: refund
    steps:
      - tool_calls:
          - tool: orders/find_order
            args: { payment_intent: "{{message}}" }
        text: Looking it up.
      - text: "Found: {{result}}"
steps:
  - text: Hello
    usage: { input: 10, output: 2 }
  - error: { status: 503, retry_after: 2 }
  - hang: true
    delay_ms: 1
`;

function expectError(text: string, key: string, line: number | undefined, problem: RegExp): void {
  try {
    parseScript(text, "scripts/x.yaml");
  } catch (err) {
    expect(ScriptFileError.isInstance(err)).toBe(true);
    const e = err as ScriptFileError;
    expect({ file: e.file, key: e.key, line: e.line }).toEqual({ file: "scripts/x.yaml", key, line });
    expect(e.message).toMatch(problem);
    expect(e.message.startsWith(`scripts/x.yaml${line === undefined ? "" : `:${line}`}: ${key}`)).toBe(true);
    return;
  }
  throw new Error("expected parseScript to fail");
}

describe("parseScript", () => {
  it("reads the script format", () => {
    expect(parseScript(VALID, "x.yaml")).toEqual({
      description: "Triage demo",
      delay_ms: 5,
      scenarios: [
        {
          match: "refund",
          steps: [
            { tool_calls: [{ tool: "orders/find_order", args: { payment_intent: "{{message}}" } }], text: "Looking it up." },
            { text: "Found: {{result}}" },
          ],
        },
      ],
      steps: [{ text: "Hello", usage: { input: 10, output: 2 } }, { error: { status: 503, retry_after: 2 } }, { hang: true, delay_ms: 1 }],
    });
  });

  it("gives a parsed script to the scripted model", async () => {
    const model = createScriptedModel(parseScript(VALID), { delayMs: 0 });
    const { content } = await model.doGenerate({ prompt: [{ role: "user", content: [{ type: "text", text: "refund pi_1" }] }] });
    expect(content).toContainEqual({
      type: "tool-call",
      toolCallId: "call_script_1",
      toolName: "orders__find_order",
      input: '{"payment_intent":"refund pi_1"}',
    });
  });

  it("defaults a tool call's args to an empty object", () => {
    expect(parseScript("steps:\n  - tool_calls: [{ tool: files/list }]\n").steps).toEqual([
      { tool_calls: [{ tool: "files/list", args: {} }] },
    ]);
  });

  it("names file, line and key on mistakes", () => {
    expectError("steps:\n  - text: hi\n    colour: red\n", "steps[0].colour", 3, /unknown key; expected one of text, tool_calls/);
    expectError("steps:\n  - text: hi\n  - tool_calls:\n      - args: {}\n", "steps[1].tool_calls[0]", 4, /needs tool/);
    expectError("steps:\n  - tool_calls:\n      - tool: 42\n", "steps[0].tool_calls[0].tool", 3, /must be a string/);
    expectError("steps:\n  - text: hi\n    error: { status: 500 }\n", "steps[0]", 2, /exactly one of .* found text, error/);
    expectError("steps:\n  - {}\n", "steps[0]", 2, /found none/);
    expectError("steps:\n  - error: { status: 200 }\n", "steps[0].error.status", 2, /400-599/);
    expectError("steps:\n  - hang: false\n", "steps[0].hang", 2, /must be true/);
    expectError("steps:\n  - text: 'hi {{user}}'\n", "steps[0].text", 2, /unknown template \{\{user\}\}/);
    expectError(
      "steps:\n  - tool_calls: [{ tool: a/b, args: { x: ['{{msg}}'] } }]\n",
      "steps[0].tool_calls[0].args.x[0]",
      2,
      /unknown template/,
    );
    expectError("scenarios:\n  - match: '('\n    steps: [{ text: x }]\n", "scenarios[0].match", 2, /not a valid regular expression/);
    expectError("scenarios:\n  - match: x\n", "scenarios[0]", 2, /needs steps/);
    expectError("steps: []\n", "steps", 1, /must not be empty/);
    expectError("steps:\n  - text: x\n    delay_ms: soon\n", "steps[0].delay_ms", 3, /number/);
    expectError("description: nothing\n", "", 1, /needs steps or scenarios/);
    expectError("", "", undefined, /empty/);
    expectError("steps:\n  - text: [unclosed\n", "", 3, /invalid YAML/);
  });
});

describe("loadScriptFile", () => {
  it("reads a file and names it in errors", () => {
    const dir = mkdtempSync(join(tmpdir(), "wardrik-script-"));
    const good = join(dir, "good.yaml");
    writeFileSync(good, "steps:\n  - text: hi\n");
    expect(loadScriptFile(good)).toEqual({ steps: [{ text: "hi" }] });
    const bad = join(dir, "bad.yaml");
    writeFileSync(bad, "steps:\n  - txt: hi\n");
    expect(() => loadScriptFile(bad)).toThrow(`${bad}:2: steps[0].txt: unknown key`);
    expect(() => loadScriptFile(join(dir, "missing.yaml"))).toThrow(/missing\.yaml: cannot read the script file/);
  });
});
