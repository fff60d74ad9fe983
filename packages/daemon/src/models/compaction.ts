import { COMPACTION_MARKER } from "@wardrik/testing/scripted-model";
import type { HistoryEntry, StoredMessage } from "../store/message-format.js";
import { jsonOnce } from "../store/json-once.js";

/** Compaction starts when the next model input would pass this share of the context window. */
export const COMPACTION_THRESHOLD = 0.6;
/** After compaction, the verbatim recent part aims at this share of the window. */
export const KEEP_RECENT_SHARE = 0.3;

export const COMPACTION_INSTRUCTIONS = `${COMPACTION_MARKER}
You compress the earlier part of a conversation between a user and an AI agent
that uses tools. Write a summary the agent can continue from: the user's goals
and requests, decisions made, facts learned from tool results (IDs, names,
numbers, file paths), what was done and what is still open. Be specific and
brief; do not invent anything. Reply with the summary only.`;

// Counting lives in token-counter.ts (a worker thread); re-exported here, where the runtime imports it from.
export { countTokens, loadTokenizer } from "./token-counter.js";

export function messageText(message: StoredMessage): string {
  switch (message.role) {
    case "user":
      return message.text;
    case "assistant":
      return message.text + message.toolCalls.map((c) => ` ${c.tool} ${JSON.stringify(c.args)}`).join("");
    case "tool":
      return message.results
        .map(
          (r) =>
            `${r.tool}: ${typeof r.output === "string" ? r.output : typeof r.output === "object" && r.output !== null ? jsonOnce(r.output) : JSON.stringify(r.output)}`,
        )
        .join("\n");
  }
}

/** Renders messages as plain text for the summariser (no tool-call structure to keep paired). */
export function transcript(entries: HistoryEntry[]): string {
  return entries
    .map((e) => {
      const m = e.message;
      switch (m.role) {
        case "user":
          return `User: ${m.text}`;
        case "assistant": {
          const calls = m.toolCalls.map((c) => `\n  [called ${c.tool} with ${JSON.stringify(c.args)}]`).join("");
          return `Agent: ${m.text}${calls}`;
        }
        case "tool":
          return m.results
            .map(
              (r) =>
                `  [${r.tool} ${r.isError ? "failed" : "returned"}: ${clip(typeof r.output === "string" ? r.output : JSON.stringify(r.output), 4000)}]`,
            )
            .join("\n");
      }
    })
    .join("\n");
}

/**
 * Where to cut: entries before the returned index are folded into the
 * summary. A cut never falls before a tool message, so a call and its result
 * stay together. Keeps as much recent history as fits `keepTokens`, and always
 * folds something when the whole history is over it.
 */
export function chooseSplit(entries: HistoryEntry[], keepTokens: number, tokensOf: (e: HistoryEntry) => number): number {
  let kept = 0;
  let split = entries.length;
  let lastSafe = -1;
  for (let i = entries.length - 1; i > 0; i--) {
    kept += tokensOf(entries[i]!);
    const safe = entries[i]!.message.role !== "tool";
    if (safe && lastSafe < 0) lastSafe = i;
    if (kept > keepTokens) break;
    if (safe) split = i;
  }
  if (split === entries.length) split = lastSafe;
  return split > 0 ? split : 0;
}

function clip(s: string, n: number): string {
  return s.length > n ? `${s.slice(0, n)}…` : s;
}
