/**
 * The Slack Web API calls Wardrik makes, through Slack's official client
 * (`@slack/web-api`) pointed at config.yaml's `api_url`. The client's own
 * log lines go to the daemon's log (which blanks secrets), never to stdout.
 */
import { ErrorCode, LogLevel, WebClient, type Logger as SlackLogger } from "@slack/web-api";
import type { Logger } from "../log/logger.js";

/** Block Kit blocks, as Slack's API takes them (plain JSON). */
export type Blocks = Record<string, unknown>[];

/** What a Wardrik message in Slack is (a reply of run R, the approval of call C): carried in its metadata. */
export interface PostMark {
  kind: string;
  ref: string;
}

/** The metadata event type of Wardrik's posts. */
const MARK_EVENT = "wardrik_message";
/** Thread pages read looking for an earlier copy of a post (a page holds up to 200 messages). */
const MAX_THREAD_PAGES = 10;

/**
 * A post that came to no message for certain: Slack answered it with an
 * error (`ok: false`) or refused it for its rate limit. Any other failure
 * (no answer, a timeout, a 5xx) leaves open whether Slack posted it.
 */
export function postRefused(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return code === ErrorCode.PlatformError || code === ErrorCode.RateLimitedError;
}

export interface SlackApiOptions {
  token: string;
  /** Slack's Web API base, such as https://slack.com/api. */
  apiUrl: string;
  log: Logger;
  /** Retries of a failed request (network, 5xx, 429); default 3. */
  retries?: number;
}

export class SlackApi {
  private readonly client: WebClient;
  /**
   * Posts go out once per call: Slack's chat.postMessage takes no key that
   * would make a second request harmless, so the client's own retry of a
   * request whose answer was lost could post twice. The caller retries,
   * after reading the thread (`findPosted`).
   */
  private readonly poster: WebClient;

  constructor(options: SlackApiOptions) {
    const common = {
      slackApiUrl: `${options.apiUrl.replace(/\/+$/, "")}/`,
      // Method names only: a method that looked like a URL must not send the token elsewhere.
      allowAbsoluteUrls: false,
      logger: slackLogger(options.log),
      logLevel: LogLevel.WARN,
      timeout: 10_000,
    };
    this.client = new WebClient(options.token, {
      ...common,
      retryConfig: { retries: options.retries ?? 3, factor: 2, minTimeout: 250, maxTimeout: 5_000 },
    });
    this.poster = new WebClient(options.token, { ...common, retryConfig: { retries: 0 }, rejectRateLimitedCalls: true });
  }

  /** Posts a message in a thread, marked with `mark` in its metadata; returns its ts. */
  async post(channel: string, threadTs: string, text: string, mark: PostMark, blocks?: Blocks): Promise<string> {
    const res = await this.poster.chat.postMessage({
      channel,
      thread_ts: threadTs,
      text,
      ...(blocks ? { blocks } : {}),
      metadata: { event_type: MARK_EVENT, event_payload: { kind: mark.kind, ref: mark.ref } },
      // Links in an agent's reply are not unfurled into previews in the thread.
      unfurl_links: false,
    });
    if (typeof res.ts !== "string") throw new Error("chat.postMessage answered without a message ts");
    return res.ts;
  }

  /**
   * The ts of the message marked `mark` in the thread, or undefined when the
   * thread has none. Throws when the thread cannot be read (the app lacks
   * the channels:history or groups:history scope, or Slack is unreachable).
   */
  async findPosted(channel: string, threadTs: string, mark: PostMark): Promise<string | undefined> {
    let cursor: string | undefined;
    for (let page = 0; page < MAX_THREAD_PAGES; page++) {
      const res = await this.client.conversations.replies({
        channel,
        ts: threadTs,
        include_all_metadata: true,
        limit: 200,
        ...(cursor ? { cursor } : {}),
      });
      const found = res.messages?.find((m) => {
        const meta = (m as { metadata?: { event_type?: string; event_payload?: Record<string, unknown> } }).metadata;
        return meta?.event_type === MARK_EVENT && meta.event_payload?.kind === mark.kind && meta.event_payload.ref === mark.ref;
      });
      if (found?.ts) return found.ts;
      cursor = res.response_metadata?.next_cursor || undefined;
      if (!res.has_more || !cursor) return undefined;
    }
    throw new Error(`the thread ${threadTs} is longer than ${MAX_THREAD_PAGES} pages; an earlier copy could not be ruled out`);
  }

  async update(channel: string, ts: string, text: string, blocks?: Blocks): Promise<void> {
    await this.client.chat.update({ channel, ts, text, ...(blocks ? { blocks } : { blocks: [] }) });
  }

  /** A message only `user` sees. */
  async ephemeral(channel: string, user: string, text: string, threadTs?: string): Promise<void> {
    await this.client.chat.postEphemeral({ channel, user, text, ...(threadTs ? { thread_ts: threadTs } : {}) });
  }
}

function slackLogger(log: Logger): SlackLogger {
  let level = LogLevel.WARN;
  const line =
    (l: "debug" | "info" | "warn" | "error") =>
    (...msg: unknown[]) =>
      log(l, `slack client: ${msg.map((m) => (typeof m === "string" ? m : JSON.stringify(m))).join(" ")}`);
  return {
    debug: line("debug"),
    info: line("info"),
    warn: line("warn"),
    error: line("error"),
    setLevel: (l) => void (level = l),
    getLevel: () => level,
    setName: () => undefined,
  };
}
