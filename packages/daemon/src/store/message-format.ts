/** The stored shape of a conversation's messages (the `messages.content` column). */

export interface ToolCallPart {
  /** The ID the model gave the call; sent back with its result. */
  modelCallId: string;
  /** Wardrik's `call_` ID. */
  callId: string;
  /** `namespace/tool` */
  tool: string;
  args: unknown;
}

export interface ToolResultPart {
  modelCallId: string;
  callId: string;
  tool: string;
  isError: boolean;
  output: unknown;
}

/** A stored row's tool result whose output is its call's `result` (a large one), left out of the row (message-text.ts). */
export interface StoredToolResultRef {
  modelCallId: string;
  callId: string;
  tool: string;
  isError: false;
  outputInCall: true;
}

export type StoredMessage =
  | {
      role: "user";
      text: string;
      input: string;
      /** Stored rows only: the message.queued event holding the text, which `text` then leaves empty (message-text.ts). */
      textSeq?: number;
    }
  | { role: "assistant"; text: string; toolCalls: ToolCallPart[] }
  | { role: "tool"; results: ToolResultPart[] };

export interface HistoryEntry {
  seq: number;
  run?: string;
  message: StoredMessage;
}
