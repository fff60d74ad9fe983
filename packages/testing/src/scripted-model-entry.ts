/**
 * The scripted model alone (`@wardrik/testing/scripted-model`): what the
 * daemon needs to run `script/...` models. Without the tool test kit, which
 * loads the worker SDK and its WebSocket client, a daemon starts sooner.
 */
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
