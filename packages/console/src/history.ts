import type { HistoryMessage } from "@wardrik/protocol";
import type { Api, HistoryPage } from "./client/api";

/** A history message's content, as the daemon stores it (message-format.ts in the daemon). */
export interface ToolCallPart {
  callId: string;
  tool: string;
  args: unknown;
}
export interface ToolResultPart {
  callId: string;
  tool: string;
  isError: boolean;
  output: unknown;
}
export type Content =
  | { role: "user"; text: string }
  | { role: "assistant"; text: string; toolCalls?: ToolCallPart[] }
  | { role: "tool"; results?: ToolResultPart[] };

export type HistoryView = HistoryPage;

const PAGE = 1000;

/** A conversation's whole history, a page at a time. */
export async function loadHistory(api: Api, agentId: string, key: string): Promise<HistoryView> {
  const messages: HistoryMessage[] = [];
  let summary: string | null = null;
  for (let after = 0; ;) {
    const page = await api.history(agentId, key, after, PAGE);
    messages.push(...page.messages);
    summary = page.summary;
    if (page.messages.length < PAGE) return { messages, summary };
    after = page.messages[page.messages.length - 1]!.seq;
  }
}

export function contentOf(m: HistoryMessage): Content {
  return m.content as Content;
}

/** Every tool result of a history, by call ID, so a call shows next to its result. */
export function resultsByCall(messages: HistoryMessage[]): Map<string, ToolResultPart> {
  const out = new Map<string, ToolResultPart>();
  for (const m of messages) {
    const c = contentOf(m);
    if (c.role === "tool") for (const r of c.results ?? []) out.set(r.callId, r);
  }
  return out;
}
