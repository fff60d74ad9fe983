// The fake model for the peer: a LangChain chat model that answers like Wardrik's scripted model
// (`steps: [{ tool_calls }, { text: "done" }]`): the first step of a turn asks for the tool calls, the
// second answers with text. It reads the prompt the way the scripted model does (which step of the
// turn this is, usage from the characters of the whole prompt) and sleeps `delayMs` per call when given.
import { BaseChatModel } from "@langchain/core/language_models/chat_models";
import { AIMessage } from "@langchain/core/messages";
import { convertToOpenAITool } from "@langchain/core/utils/function_calling";

// Messages LangGraph sends again on every call are counted once, as the scripted model does.
const charsOf = new WeakMap();

export class ScriptedChatModel extends BaseChatModel {
  /** @param {{ calls: number, delayMs?: number }} options calls: tool calls the first step asks for at once. */
  constructor(options) {
    super({});
    this.calls = options.calls;
    this.delayMs = options.delayMs ?? 0;
    this.toolCallCount = 0;
  }

  _llmType() {
    return "wardrik-scripted";
  }

  /** As provider models do: the tools are converted once and sent with every call. */
  bindTools(tools, kwargs) {
    return this.withConfig({ tools: tools.map((t) => convertToOpenAITool(t)), ...kwargs });
  }

  async _generate(messages, options) {
    if (this.delayMs > 0) await new Promise((resolve) => setTimeout(resolve, this.delayMs));
    let lastHuman = messages.length - 1;
    while (lastHuman >= 0 && messages[lastHuman].type !== "human") lastHuman--;
    const step = messages.slice(lastHuman + 1).filter((m) => m.type === "ai").length;
    const tool = options.tools?.[0]?.function.name;
    if (step === 0 && tool === undefined) throw new Error("the scripted model was called without tools: bind the lookup tool");
    const toolCalls =
      step === 0
        ? Array.from({ length: this.calls }, (_, i) => ({
            id: `call_script_${++this.toolCallCount}`,
            name: tool,
            args: { id: `id_${i}` },
            type: "tool_call",
          }))
        : [];
    const text = step === 0 ? "" : "done";
    let inputChars = 0;
    for (const m of messages) inputChars += charsOfMessage(m);
    const outputChars = text.length + toolCalls.reduce((n, c) => n + c.name.length + JSON.stringify(c.args).length, 0);
    const input = Math.ceil(inputChars / 4);
    const output = Math.ceil(outputChars / 4);
    const message = new AIMessage({
      content: text,
      tool_calls: toolCalls,
      usage_metadata: { input_tokens: input, output_tokens: output, total_tokens: input + output },
      response_metadata: { finish_reason: toolCalls.length > 0 ? "tool_calls" : "stop" },
    });
    return { generations: [{ text, message }] };
  }
}

function charsOfMessage(message) {
  const known = charsOf.get(message);
  if (known !== undefined) return known;
  let chars = typeof message.content === "string" ? message.content.length : JSON.stringify(message.content).length;
  for (const call of message.tool_calls ?? []) chars += call.name.length + JSON.stringify(call.args).length;
  charsOf.set(message, chars);
  return chars;
}
