export {
  COMPACTION_MARKER,
  ScriptFileError,
  builtinScripts,
  createScriptedModel,
  loadScriptFile,
  parseScript,
} from "./scripted-model-entry.js";
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
} from "./scripted-model-entry.js";
export { ToolCallError, createToolContext, runTool } from "./run-tool.js";
export type { TestAbortReason, TestToolContext, TestToolContextOptions } from "./run-tool.js";
