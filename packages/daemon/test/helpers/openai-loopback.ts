/**
 * A loopback HTTP server that speaks the OpenAI Chat Completions wire format,
 * for end-to-end tests that point a `provider: openai-compatible` model at it.
 * It records every request; a handler decides each answer. It closes by
 * itself after the test (or the file, when started in beforeAll).
 */
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { cleanupLater } from "./spawn-daemon.js";

export interface ReceivedRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  /** The JSON body (undefined when empty or not JSON). */
  body: ChatRequestBody | undefined;
  raw: string;
}

export interface ChatRequestBody {
  model: string;
  stream?: boolean;
  stream_options?: { include_usage?: boolean };
  messages: ChatMessage[];
  tools?: { type: string; function: { name: string; description?: string; parameters?: unknown } }[];
  [key: string]: unknown;
}

export interface ChatMessage {
  role: "system" | "user" | "assistant" | "tool";
  content?: string | null | { type: string; text?: string }[];
  tool_calls?: { id: string; type: string; function: { name: string; arguments: string } }[];
  tool_call_id?: string;
}

export interface LoopbackReply {
  status?: number;
  headers?: Record<string, string>;
  /**
   * Written piece by piece (a short pause between pieces), so clients see split chunks.
   * A promise among them holds the rest back until it settles (a test decides when the reply goes on).
   */
  pieces: (string | Promise<unknown>)[];
  /** The pause between pieces in ms (default 5): longer pauses make a reply stream over time. */
  pauseMs?: number;
}

export type LoopbackHandler = (req: ReceivedRequest, index: number) => LoopbackReply | Promise<LoopbackReply>;

export interface OpenAiLoopback {
  /** http://127.0.0.1:PORT/v1 — the base_url for config.yaml. */
  baseUrl: string;
  requests: ReceivedRequest[];
  /** Replace the handler (the default answers 500). */
  handle(handler: LoopbackHandler): void;
  close(): Promise<void>;
}

export async function startOpenAiLoopback(handler?: LoopbackHandler): Promise<OpenAiLoopback> {
  const requests: ReceivedRequest[] = [];
  let current: LoopbackHandler = handler ?? (() => ({ status: 500, pieces: ['{"error":{"message":"no handler"}}'] }));
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const raw = Buffer.concat(chunks).toString("utf8");
      let body: ChatRequestBody | undefined;
      try {
        body = raw ? (JSON.parse(raw) as ChatRequestBody) : undefined;
      } catch {
        body = undefined;
      }
      const received: ReceivedRequest = { method: req.method ?? "", url: req.url ?? "", headers: req.headers, body, raw };
      requests.push(received);
      void (async () => {
        try {
          const reply = await current(received, requests.length - 1);
          const streaming = reply.pieces.length > 1 || (reply.headers?.["content-type"] ?? "").includes("event-stream");
          res.writeHead(reply.status ?? 200, {
            "content-type": streaming ? "text/event-stream" : "application/json",
            ...(streaming ? { "cache-control": "no-cache" } : {}),
            ...reply.headers,
          });
          for (const piece of reply.pieces) {
            if (typeof piece !== "string") {
              await piece;
              continue;
            }
            res.write(piece);
            await new Promise((r) => setTimeout(r, reply.pauseMs ?? 5));
          }
          res.end();
        } catch (err) {
          res.destroy(err as Error);
        }
      })();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const port = (server.address() as AddressInfo).port;
  const loopback: OpenAiLoopback = {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    handle(h) {
      current = h;
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  cleanupLater(() => loopback.close());
  return loopback;
}

// ---- wire format ----

let created = 1_760_000_000;

/** One `chat.completion.chunk` with this delta. */
export function chunk(
  delta: Record<string, unknown>,
  finishReason: string | null = null,
  model = "loopback-model",
): Record<string, unknown> {
  return {
    id: "chatcmpl-e2e",
    object: "chat.completion.chunk",
    created: created++,
    model,
    choices: [{ index: 0, delta, finish_reason: finishReason }],
  };
}

/** The final usage chunk (sent when stream_options.include_usage is set): no choices. */
export function usageChunk(promptTokens: number, completionTokens: number, model = "loopback-model"): Record<string, unknown> {
  return {
    id: "chatcmpl-e2e",
    object: "chat.completion.chunk",
    created: created++,
    model,
    choices: [],
    usage: { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens },
  };
}

/** SSE frames for these chunks, then `data: [DONE]`. */
export function sse(chunks: Record<string, unknown>[]): string[] {
  return [...chunks.map((c) => `data: ${JSON.stringify(c)}\n\n`), "data: [DONE]\n\n"];
}

/** Splits the concatenated frames at arbitrary byte positions (mid-line, mid-JSON). */
export function splitAwkwardly(pieces: string[], size = 17): string[] {
  const all = pieces.join("");
  const out: string[] = [];
  for (let i = 0; i < all.length; i += size) out.push(all.slice(i, i + size));
  return out;
}

/** The text of a chat message's content. */
export function contentText(m: ChatMessage): string {
  if (typeof m.content === "string") return m.content;
  if (Array.isArray(m.content)) return m.content.map((p) => p.text ?? "").join("");
  return "";
}
