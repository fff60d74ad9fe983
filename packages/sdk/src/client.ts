import type { AgentDetail, AgentSummary, CreateAgentBody, PostMessageResult, TurnView, WardrikCloudEvent } from "@wardrik/protocol";
import { WardrikError } from "@wardrik/protocol";
import { EventSourceParserStream, type EventSourceMessage } from "eventsource-parser/stream";

export interface ClientOptions {
  /**
   * The daemon's base URL, such as http://127.0.0.1:7373. Defaults to
   * WARDRIK_URL. Nodes of a cluster may be listed, separated by commas: a
   * request that cannot connect to one (so surely never reached it) goes to
   * the next.
   */
  url?: string | undefined;
  /** A bearer token of one org. Defaults to WARDRIK_TOKEN. */
  token?: string | undefined;
}

export interface FollowOptions {
  after?: number;
  signal?: AbortSignal;
  /** Live text deltas of model replies, as they stream. */
  /** `reset`: the model call is being retried and the text so far is void. */
  onDelta?: (run: string, text: string, reset?: boolean) => void;
}

/** The HTTP API client: agents by ID, as the API takes them. The CLI is built on it. */
export class WardrikClient {
  private readonly urls: string[];
  private current = 0;
  private readonly token: string;

  constructor(options: ClientOptions = {}) {
    const url = options.url ?? process.env.WARDRIK_URL;
    const token = options.token ?? process.env.WARDRIK_TOKEN;
    if (!url) throw new WardrikError("bad_request", "No daemon URL: pass url or set WARDRIK_URL.");
    if (!token) throw new WardrikError("unauthorized", "No token: pass token or set WARDRIK_TOKEN.");
    this.urls = url
      .split(",")
      .map((u) => u.trim().replace(/\/+$/, ""))
      .filter((u) => u !== "");
    if (this.urls.length === 0) throw new WardrikError("bad_request", `The daemon URL names no address: "${url}".`);
    this.token = token;
  }

  /** The address in use: the first of the list, or the one that last answered. */
  get url(): string {
    return this.urls[this.current]!;
  }

  private async request<T>(method: string, path: string, body?: unknown): Promise<T> {
    let res: Response | undefined;
    for (let tried = 1; ; tried++) {
      try {
        res = await fetch(this.url + path, {
          method,
          headers: { authorization: `Bearer ${this.token}`, ...(body !== undefined ? { "content-type": "application/json" } : {}) },
          ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
        });
        break;
      } catch (err) {
        // Only a refused connection proves the request never arrived; anything else may have been applied.
        if (tried >= this.urls.length || (err as { cause?: { code?: string } }).cause?.code !== "ECONNREFUSED") throw this.unreachable(err);
        this.current = (this.current + 1) % this.urls.length;
      }
    }
    const text = await res.text();
    let json: unknown;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      if (!res.ok) throw WardrikError.fromResponse(res.status, undefined);
      throw new WardrikError("internal", `The daemon answered ${res.status} with a body that is not JSON.`);
    }
    if (!res.ok) throw WardrikError.fromResponse(res.status, json, retryAfterOf(res.headers.get("retry-after")));
    return json as T;
  }

  private unreachable(err: unknown): WardrikError {
    return new WardrikError(
      "unavailable",
      `Cannot reach the Wardrik daemon at ${this.url}: ${(err as Error & { cause?: { code?: string } }).cause?.code ?? (err as Error).message}. Is \`wardrik daemon\` running?`,
      {
        retryable: true,
      },
    );
  }

  health(): Promise<{ ok: boolean; version: string }> {
    return this.request("GET", "/v1/health");
  }

  async listAgents(): Promise<AgentSummary[]> {
    return (await this.request<{ agents: AgentSummary[] }>("GET", "/v1/agents")).agents;
  }

  /** Finds an agent of the token's org by name; undefined when there is none. */
  async findAgent(name: string): Promise<AgentSummary | undefined> {
    const { agents } = await this.request<{ agents: AgentSummary[] }>("GET", `/v1/agents?name=${encodeURIComponent(name)}`);
    return agents[0];
  }

  getAgent(id: string): Promise<AgentDetail> {
    return this.request("GET", `/v1/agents/${enc(id)}`);
  }

  createAgent(body: CreateAgentBody): Promise<AgentSummary> {
    return this.request("POST", "/v1/agents", body);
  }

  removeAgent(id: string): Promise<{ ok: true }> {
    return this.request("DELETE", `/v1/agents/${enc(id)}`);
  }

  sendMessage(id: string, text: string, conversation?: string): Promise<PostMessageResult> {
    return this.request("POST", `/v1/agents/${enc(id)}/messages`, { text, ...(conversation ? { conversation } : {}) });
  }

  getTurn(id: string, run: string): Promise<TurnView> {
    return this.request("GET", `/v1/agents/${enc(id)}/turns/${enc(run)}`);
  }

  history(
    id: string,
    conversation = "main",
  ): Promise<{ summary: string | null; messages: { seq: number; role: string; run?: string; content: unknown; created_at: string }[] }> {
    return this.request("GET", `/v1/agents/${enc(id)}/conversations/${enc(conversation)}/messages`);
  }

  cancel(id: string, conversation?: string): Promise<{ cancelled: string[]; dropped: number }> {
    return this.request("POST", `/v1/agents/${enc(id)}/cancel`, conversation ? { conversation } : {});
  }

  clear(id: string, conversation?: string): Promise<{ cleared: string[] }> {
    return this.request("POST", `/v1/agents/${enc(id)}/clear`, conversation ? { conversation } : {});
  }

  kill(id: string, call: string): Promise<{ call: string; status: string; tool: string }> {
    return this.request("POST", `/v1/agents/${enc(id)}/calls/${enc(call)}/kill`, {});
  }

  /** `args`: run the call with these arguments instead of the model's (the daemon checks them against the tool's schema). */
  approve(id: string, call: string, args?: Record<string, unknown>): Promise<{ call: string; status: string; tool: string }> {
    return this.request("POST", `/v1/agents/${enc(id)}/calls/${enc(call)}/approve`, args ? { arguments: args } : {});
  }

  deny(id: string, call: string, reason?: string): Promise<{ call: string; status: string; tool: string }> {
    return this.request("POST", `/v1/agents/${enc(id)}/calls/${enc(call)}/deny`, reason ? { reason } : {});
  }

  createToken(org: string, name?: string): Promise<{ org: string; name: string; token: string }> {
    return this.request("POST", "/v1/tokens", { org, ...(name ? { name } : {}) });
  }

  setSecret(name: string, value: string): Promise<{ name: string; stored: true }> {
    return this.request("POST", `/v1/secrets/${enc(name)}`, { value });
  }

  async listSecrets(): Promise<string[]> {
    return (await this.request<{ secrets: string[] }>("GET", "/v1/secrets")).secrets;
  }

  reload(): Promise<{ added: string[]; updated: string[]; removed: string[]; unreadable: string[] }> {
    return this.request("POST", "/v1/reload", {});
  }

  events(id: string, after = 0, limit = 1000): Promise<{ events: WardrikCloudEvent[]; last_seq: number }> {
    return this.request("GET", `/v1/agents/${enc(id)}/events?after=${after}&limit=${limit}`);
  }

  /**
   * Follows an agent's events live (server-sent events), reconnecting with
   * Last-Event-ID after a dropped connection, until the signal aborts.
   */
  async *follow(id: string, options: FollowOptions = {}): AsyncGenerator<WardrikCloudEvent> {
    let after = options.after ?? 0;
    let failures = 0;
    while (!options.signal?.aborted) {
      let res: Response;
      try {
        res = await fetch(`${this.url}/v1/agents/${enc(id)}/events/stream`, {
          headers: { authorization: `Bearer ${this.token}`, accept: "text/event-stream", "last-event-id": String(after) },
          ...(options.signal ? { signal: options.signal } : {}),
        });
      } catch (err) {
        if (options.signal?.aborted) return;
        if (++failures > 30) throw err;
        await new Promise((r) => setTimeout(r, Math.min(2000, 100 * failures)));
        continue;
      }
      if (!res.ok || !res.body) {
        throw WardrikError.fromResponse(res.status, parseOrUndefined(await res.text()));
      }
      failures = 0;
      try {
        for await (const msg of parseSse(res.body)) {
          if (msg.event === "delta") {
            const d = JSON.parse(msg.data) as { run: string; text: string; reset?: boolean };
            options.onDelta?.(d.run, d.text, d.reset);
            continue;
          }
          const event = JSON.parse(msg.data) as WardrikCloudEvent;
          after = event.seq;
          yield event;
        }
      } catch (err) {
        if (options.signal?.aborted) return;
        if (!(err instanceof TypeError) && !(err as Error).message?.includes("terminated")) throw err;
      }
    }
  }
}

function enc(s: string): string {
  return encodeURIComponent(s);
}

function parseOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** Retry-After in seconds (the daemon sends seconds, never a date). */
function retryAfterOf(header: string | null): number | undefined {
  const seconds = header === null ? NaN : Number(header);
  return Number.isFinite(seconds) ? seconds : undefined;
}

/**
 * Server-sent events by the spec (CRLF, CR or LF line ends, multi-line data,
 * comments, ids), read from a fetch body.
 */
async function* parseSse(body: ReadableStream<Uint8Array>): AsyncGenerator<EventSourceMessage> {
  const messages = body.pipeThrough(new TextDecoderStream()).pipeThrough(new EventSourceParserStream());
  for await (const message of messages as unknown as AsyncIterable<EventSourceMessage>) {
    if (message.data !== "") yield message;
  }
}
