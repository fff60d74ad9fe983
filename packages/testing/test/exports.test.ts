import { expect, it } from "vitest";
import * as testing from "@wardrik/testing";

it("pins the public export map", () => {
  expect(Object.keys(testing).sort()).toEqual([
    "COMPACTION_MARKER",
    "ScriptFileError",
    "ToolCallError",
    "builtinScripts",
    "createScriptedModel",
    "createToolContext",
    "loadScriptFile",
    "parseScript",
    "runTool",
  ]);
});
