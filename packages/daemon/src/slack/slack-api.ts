/**
 * The Slack Web API calls Wardrik makes, through Slack's official client
 * (`@slack/web-api`) pointed at config.yaml's `api_url`. The client's own
 * log lines go to the daemon's log (which blanks secrets), never to stdout.
 */
import { LogLevel, WebClient, type Logger as SlackLogger } from "@slack/web-api";
import type { Logger } from "../log/logger.js";

/** Block Kit blocks, as Slack's API takes them (plain JSON). */
export type Blocks = Record<string, unknown>[];

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

  constructor(options: SlackApiOptions) {
    this.client = new WebClient(options.token, {
      slackApiUrl: `${options.apiUrl.replace(/\/+$/, "")}/`,
      // Method names only: a method that looked like a URL must not send the token elsewhere.
      allowAbsoluteUrls: false,
      logger: slackLogger(options.log),
      logLevel: LogLevel.WARN,
      timeout: 10_000,
      retryConfig: { retries: options.retries ?? 3, factor: 2, minTimeout: 250, maxTimeout: 5_000 },
    });
  }

  /** Posts a message in a thread; returns its ts. */
  async post(channel: string, threadTs: string, text: string, blocks?: Blocks): Promise<string> {
    const res = await this.client.chat.postMessage({
      channel,
      thread_ts: threadTs,
      text,
      ...(blocks ? { blocks } : {}),
      // Links in an agent's reply are not unfurled into previews in the thread.
      unfurl_links: false,
    });
    if (typeof res.ts !== "string") throw new Error("chat.postMessage answered without a message ts");
    return res.ts;
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
