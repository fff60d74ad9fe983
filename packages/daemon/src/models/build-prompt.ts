import type { LanguageModelV3Message, LanguageModelV3Prompt, LanguageModelV3ToolResultOutput } from "@ai-sdk/provider";
import type { HistoryEntry, StoredMessage } from "../store/message-format.js";
import { toModelToolName } from "../tools/toolset.js";
import { messageText } from "./compaction.js";
import { countTokens, exactTokens } from "./token-counter.js";

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
  private readonly tokens: number[] = [];
  private readonly texts: string[] = [];
  private textChars = 0;
  /** Indexes of messages whose count is still an estimate (the tokenizer had not counted them yet). */
  private readonly estimated = new Set<number>();
  /** The provider's count for the prompt of the last call, and how many messages it held. */
  private reported: { tokens: number; messages: number } | undefined;
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
    const text = messageText(entry.message);
    this.texts.push(text);
    this.textChars += text.length;
    this.tokens.push(countTokens(text));
    if (exactTokens(text) === undefined) this.estimated.add(this.texts.length - 1);
    this.lastSeq = entry.seq;
  }

  /** Records what the provider counted for the prompt just sent (`messages` = history length then). */
  recordUsage(inputTokens: number, messages: number): void {
    if (inputTokens > 0) this.reported = { tokens: inputTokens, messages };
  }

  /**
   * Tokens the next prompt will take: the provider's own count for the part it
   * has seen, plus the tokenizer's count of what was added since.
   */
  estimateTokens(instructions: string): number {
    if (this.reported && this.reported.messages <= this.messages.length) {
      let added = 0;
      for (let i = this.reported.messages; i < this.tokens.length; i++) added += this.tokens[i]!;
      return this.reported.tokens + added;
    }
    let total = countTokens(instructions) + (this.summary ? countTokens(this.summary) : 0);
    for (const t of this.tokens) total += t;
    return total;
  }

  /**
   * Replaces estimates with the tokenizer's exact counts where it has given
   * them, and asks it for the others (their counts arrive for a later call).
   * Cheap: each message is counted exactly once, off the daemon's thread.
   */
  recount(): void {
    for (const i of this.estimated) {
      const text = this.texts[i]!;
      this.tokens[i] = countTokens(text);
      if (exactTokens(text) !== undefined) this.estimated.delete(i);
    }
  }

  get length(): number {
    return this.messages.length;
  }

  /** Characters of the messages' text (and the summary's): what the prompt's size in memory grows with. */
  get chars(): number {
    return this.textChars + (this.summary?.length ?? 0);
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
