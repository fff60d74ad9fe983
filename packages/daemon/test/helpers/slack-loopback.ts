/**
 * A loopback stand-in for Slack, both ways:
 * - its Web API (`/api/chat.postMessage`, `chat.update`, `chat.postEphemeral`,
 *   `conversations.replies`), reading form- or JSON-encoded bodies and
 *   answering `{ ok: true, ... }` as Slack does, checking the bot token; it
 *   records every call with the time it arrived and keeps each message's
 *   current text, blocks and metadata;
 * - Slack's requests to Wardrik, signed with a signing secret
 *   (`X-Slack-Signature` v0) exactly as Slack signs them.
 * It closes by itself after the test (or the file, when started in beforeAll).
 */
import { createHmac } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { cleanupLater, waitFor } from "./spawn-daemon.js";

export interface SlackApiCall {
  method: string;
  /** The arguments, decoded; `blocks` parsed from its JSON text. */
  args: Record<string, unknown>;
  /** Milliseconds since the epoch when the request arrived. */
  at: number;
}

export interface PostedMessage {
  channel: string;
  ts: string;
  thread_ts: string | undefined;
  text: string;
  blocks: Record<string, unknown>[] | undefined;
  /** The message metadata it was posted with (`event_type`, `event_payload`). */
  metadata: Record<string, unknown> | undefined;
  /** Every text the message had, first to last. */
  history: string[];
}

export interface SlackLoopback {
  /** The api_url for config.yaml: http://127.0.0.1:PORT/api */
  apiUrl: string;
  calls: SlackApiCall[];
  messages: Map<string, PostedMessage>;
  /** Calls of one method, optionally only those for one message ts. */
  callsOf(method: string, ts?: string): SlackApiCall[];
  /** Methods answered `{ ok: false, error: "fatal_error" }` (as when Slack has an outage) until set back to empty. */
  failing: Set<string>;
  /**
   * Runs once a call has been carried out (a post is in `messages`) and
   * before its answer leaves: a test kills the daemon here to lose Slack's answer.
   * A promise it returns holds the answer back until it settles.
   */
  onCall: ((call: SlackApiCall) => void | Promise<unknown>) | undefined;
  /** Waits until `find` returns something, from the recorded state. */
  waitFor<T>(find: () => T | undefined | false, what: string, timeoutMs?: number): Promise<T>;
  close(): Promise<void>;
}

export async function startSlackLoopback(botToken: string): Promise<SlackLoopback> {
  const calls: SlackApiCall[] = [];
  const messages = new Map<string, PostedMessage>();
  const failing = new Set<string>();
  let counter = 0;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const at = Date.now();
      const raw = Buffer.concat(chunks).toString("utf8");
      const method = (req.url ?? "").replace(/^\/api\//, "").split("?")[0]!;
      const type = req.headers["content-type"] ?? "";
      const args: Record<string, unknown> = type.includes("json")
        ? (JSON.parse(raw || "{}") as Record<string, unknown>)
        : Object.fromEntries(new URLSearchParams(raw));
      for (const k of ["blocks", "metadata"]) {
        const v = args[k];
        if (typeof v === "string") args[k] = JSON.parse(v);
      }
      const call: SlackApiCall = { method, args, at };
      let recorded = false;
      const answer = (status: number, body: unknown) => {
        const held = recorded ? loopback.onCall?.(call) : undefined;
        void Promise.resolve(held).then(() => {
          if (res.destroyed) return;
          res.writeHead(status, { "content-type": "application/json; charset=utf-8" });
          res.end(JSON.stringify(body));
        });
      };
      // Slack answers 200 with ok: false for a bad token.
      if (req.headers.authorization !== `Bearer ${botToken}`) return answer(200, { ok: false, error: "invalid_auth" });
      calls.push(call);
      recorded = true;
      if (failing.has(method)) return answer(200, { ok: false, error: "fatal_error" });
      const blocks = args.blocks as Record<string, unknown>[] | undefined;
      switch (method) {
        case "chat.postMessage": {
          const ts = `1700000900.${String(++counter).padStart(6, "0")}`;
          const text = String(args.text ?? "");
          const m: PostedMessage = {
            channel: String(args.channel),
            ts,
            thread_ts: args.thread_ts as string | undefined,
            text,
            blocks,
            metadata: args.metadata as Record<string, unknown> | undefined,
            history: [text],
          };
          messages.set(ts, m);
          return answer(200, { ok: true, channel: m.channel, ts, message: { text, ts, thread_ts: m.thread_ts } });
        }
        case "chat.update": {
          const m = messages.get(String(args.ts));
          if (!m || m.channel !== args.channel) return answer(200, { ok: false, error: "message_not_found" });
          m.text = String(args.text ?? "");
          m.blocks = blocks;
          m.history.push(m.text);
          return answer(200, { ok: true, channel: m.channel, ts: m.ts, text: m.text });
        }
        case "conversations.replies": {
          // The thread's messages, oldest first, with their metadata only when asked for (include_all_metadata).
          const withMeta = String(args.include_all_metadata) === "true";
          const thread = [...messages.values()]
            .filter((m) => m.channel === args.channel && m.thread_ts === args.ts)
            .map((m) => ({
              type: "message",
              ts: m.ts,
              thread_ts: m.thread_ts,
              text: m.text,
              ...(withMeta && m.metadata ? { metadata: m.metadata } : {}),
            }));
          return answer(200, { ok: true, messages: thread, has_more: false, response_metadata: { next_cursor: "" } });
        }
        case "chat.postEphemeral":
          return answer(200, { ok: true, message_ts: `1700000950.${String(++counter).padStart(6, "0")}` });
        default:
          return answer(200, { ok: false, error: "unknown_method" });
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const port = (server.address() as AddressInfo).port;
  const loopback: SlackLoopback = {
    apiUrl: `http://127.0.0.1:${port}/api`,
    calls,
    messages,
    failing,
    onCall: undefined,
    callsOf: (method, ts) => calls.filter((c) => c.method === method && (ts === undefined || c.args.ts === ts)),
    waitFor: (find, what, timeoutMs = 30_000) => waitFor(async () => find() || undefined, what, timeoutMs),
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  cleanupLater(() => loopback.close());
  return loopback;
}

// ---- Slack's requests to Wardrik ----

export function slackSignature(secret: string, timestamp: string, body: string): string {
  return `v0=${createHmac("sha256", secret).update(`v0:${timestamp}:${body}`).digest("hex")}`;
}

export interface SlackRequestOptions {
  /** Unix seconds; default now. */
  timestamp?: number;
  /** Sign with this secret instead. */
  secret?: string;
  retryNum?: number;
  unsigned?: boolean;
}

/** POSTs a body to a Wardrik URL as Slack would: signed, without a bearer token. */
export async function sendAsSlack(
  url: string,
  secret: string,
  body: string,
  contentType: "application/json" | "application/x-www-form-urlencoded",
  opts: SlackRequestOptions = {},
): Promise<{ status: number; text: string; json: unknown }> {
  const timestamp = String(opts.timestamp ?? Math.floor(Date.now() / 1000));
  const headers: Record<string, string> = { "content-type": contentType };
  if (!opts.unsigned) {
    headers["x-slack-request-timestamp"] = timestamp;
    headers["x-slack-signature"] = slackSignature(opts.secret ?? secret, timestamp, body);
  }
  if (opts.retryNum !== undefined) {
    headers["x-slack-retry-num"] = String(opts.retryNum);
    headers["x-slack-retry-reason"] = "http_timeout";
  }
  const res = await fetch(url, { method: "POST", headers, body });
  const text = await res.text();
  let json: unknown;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return { status: res.status, text, json };
}

let eventCounter = 0;

/** An Events API `event_callback` body for a message (app_mention or message). */
export function messageEvent(e: {
  type?: "app_mention" | "message";
  channel: string;
  user: string;
  text: string;
  ts: string;
  thread_ts?: string;
  event_id?: string;
  bot_id?: string;
}): string {
  const { event_id, type, ...event } = e;
  return JSON.stringify({
    token: "ignored-verification-token",
    team_id: "T0TEAM",
    api_app_id: "A0APP",
    type: "event_callback",
    event_id: event_id ?? `Ev${String(++eventCounter).padStart(8, "0")}`,
    event_time: Math.floor(Date.now() / 1000),
    event: { type: type ?? "app_mention", ...event, event_ts: e.ts },
  });
}

/** An interactivity body: a click on a button of a message, form-encoded as Slack sends it. */
export function buttonClick(c: {
  user: string;
  channel: string;
  messageTs: string;
  threadTs?: string;
  actionId: string;
  value: string;
}): string {
  const payload = {
    type: "block_actions",
    user: { id: c.user, username: c.user.toLowerCase(), team_id: "T0TEAM" },
    api_app_id: "A0APP",
    container: { type: "message", message_ts: c.messageTs, channel_id: c.channel, is_ephemeral: false, thread_ts: c.threadTs },
    channel: { id: c.channel, name: "triage" },
    message: { type: "message", ts: c.messageTs, thread_ts: c.threadTs, text: "..." },
    response_url: "http://127.0.0.1:9/unused",
    actions: [{ type: "button", action_id: c.actionId, block_id: "wardrik_decision", value: c.value, action_ts: "1700000999.000001" }],
  };
  return new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
}
