export { COMPACTION_MARKER, builtinScripts, createScriptedModel } from "./scripted-model.js";
export type {
  Script,
  ScriptContext,
  ScriptDefinition,
  ScriptError,
  ScriptFunction,
  ScriptScenario,
  ScriptStep,
  ScriptToolCall,
  ScriptToolResult,
  ScriptUsage,
  ScriptedModel,
  ScriptedModelOptions,
} from "./script-types.js";
export { ScriptFileError, loadScriptFile, parseScript } from "./script-file.js";
export { ToolCallError, createToolContext, runTool } from "./run-tool.js";
export type { TestAbortReason, TestToolContext, TestToolContextOptions } from "./run-tool.js";
