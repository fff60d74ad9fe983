import type { LanguageModelV3Message, LanguageModelV3Prompt, LanguageModelV3ToolResultOutput } from "@ai-sdk/provider";
import type { HistoryEntry, StoredMessage } from "../runtime/messages.js";
import { toModelToolName } from "../tools/toolset.js";

/** Converts one stored message to the provider-neutral prompt format. */
export function toModelMessage(message: StoredMessage): LanguageModelV3Message {
  switch (message.role) {
    case "user":
      return { role: "user", content: [{ type: "text", text: message.text }] };
    case "assistant": {
      const content: Extract<LanguageModelV3Message, { role: "assistant" }>["content"] = [];
      if (message.text) content.push({ type: "text", text: message.text });
      for (const c of message.toolCalls) {
        content.push({ type: "tool-call", toolCallId: c.modelCallId, toolName: toModelToolName(c.tool), input: c.args ?? {} });
      }
      return { role: "assistant", content };
    }
    case "tool":
      return {
        role: "tool",
        content: message.results.map((r) => ({
          type: "tool-result" as const,
          toolCallId: r.modelCallId,
          toolName: toModelToolName(r.tool),
          output: toolOutput(r.isError, r.output),
        })),
      };
  }
}

function toolOutput(isError: boolean, output: unknown): LanguageModelV3ToolResultOutput {
  if (isError) return { type: "error-text", value: typeof output === "string" ? output : JSON.stringify(output) };
  if (typeof output === "string") return { type: "text", value: output };
  return { type: "json", value: (output ?? null) as never };
}

/**
 * A conversation's prompt, kept incrementally: converting each stored message
 * once keeps a model call's cost flat as the history grows.
 */
export class PromptCache {
  private readonly messages: LanguageModelV3Message[] = [];
  lastSeq = 0;

  /** `summary`: the compacted earlier part of the conversation, if any. */
  constructor(
    entries: HistoryEntry[] = [],
    readonly summary: string | null = null,
  ) {
    for (const e of entries) this.push(e);
  }

  push(entry: HistoryEntry): void {
    this.messages.push(toModelMessage(entry.message));
    this.lastSeq = entry.seq;
  }

  get length(): number {
    return this.messages.length;
  }

  build(instructions: string): LanguageModelV3Prompt {
    const summary = this.summary;
    const prompt: LanguageModelV3Prompt = [];
    if (instructions) prompt.push({ role: "system", content: instructions });
    if (summary) prompt.push({ role: "system", content: `Summary of the earlier conversation:\n${summary}` });
    for (const m of this.messages) prompt.push(m);
    return prompt;
  }
}
