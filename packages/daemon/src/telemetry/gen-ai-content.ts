/**
 * Message content in the shapes the GenAI semantic conventions define for
 * `gen_ai.system_instructions`, `gen_ai.input.messages` and
 * `gen_ai.output.messages` (role + typed parts), recorded as JSON strings on
 * spans. Only built when content capture is on (it is off by default: prompts
 * and replies hold users' data).
 */
import type { LanguageModelV3Prompt } from "@ai-sdk/provider";
import type { ModelReply } from "../runtime/call-model.js";

type Part =
  | { type: "text"; content: string }
  | { type: "tool_call"; id: string; name: string; arguments: unknown }
  | { type: "tool_call_response"; id: string; result: unknown };

interface Message {
  role: string;
  parts: Part[];
}

export function systemInstructions(instructions: string): string {
  return JSON.stringify([{ type: "text", content: instructions }]);
}

/** The prompt without its system message (that is `gen_ai.system_instructions`). */
export function inputMessages(prompt: LanguageModelV3Prompt): string {
  const out: Message[] = [];
  for (const m of prompt) {
    if (m.role === "system") continue;
    const parts: Part[] = [];
    for (const p of m.content) {
      if (p.type === "text") parts.push({ type: "text", content: p.text });
      else if (p.type === "tool-call") parts.push({ type: "tool_call", id: p.toolCallId, name: p.toolName, arguments: p.input });
      else if (p.type === "tool-result") parts.push({ type: "tool_call_response", id: p.toolCallId, result: toolResultValue(p.output) });
    }
    out.push({ role: m.role, parts });
  }
  return JSON.stringify(out);
}

export function outputMessages(reply: ModelReply): string {
  const parts: Part[] = [];
  if (reply.text !== "") parts.push({ type: "text", content: reply.text });
  for (const c of reply.toolCalls) parts.push({ type: "tool_call", id: c.toolCallId, name: c.toolName, arguments: parseJson(c.input) });
  return JSON.stringify([{ role: "assistant", parts, finish_reason: reply.finishReason }]);
}

/**
 * A tool call's arguments or result (`gen_ai.tool.call.arguments`, `.result`)
 * as JSON. A result that is not JSON-serialisable is the engine's to fail
 * (bad_result); recording it must not throw first and fail the turn.
 */
export function toolContent(value: unknown): string {
  try {
    return JSON.stringify(value) ?? "null";
  } catch (err) {
    return `[not JSON-serialisable: ${(err as Error).message}]`;
  }
}

function toolResultValue(output: { type: string; value?: unknown }): unknown {
  return "value" in output ? output.value : output.type;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}
