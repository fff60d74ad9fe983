import { randomUUID } from "node:crypto";
import type {
  AgentDetail,
  AgentSummary,
  AgentTools,
  DeliveryPage,
  DeliveryView,
  McpLoginResult,
  McpLogoutResult,
  McpServerView,
  PostMessageResult,
  TurnView,
  WardrikCloudEvent,
  ModelRetry,
  ReloadResult,
  NodeList,
  SecretNames,
  ForkResult,
  ReplayBody,
  ReplayReport,
} from "@wardrik/protocol";
import { WardrikError } from "@wardrik/protocol/base";
import { NoAnswerError, openStream, sendRequest, type HttpAnswer, type HttpStream } from "./http-request.js";
import { parseSse } from "./parse-sse.js";

export interface RequestOptions {
  /** Sent as `Idempotency-Key`; the same on every retry of this request. null: send none (a route that refuses keys). */
  idempotencyKey?: string | null;
  /**
   * A time (ms since the epoch) by which the request has an answer or fails.
   * Until then connection errors, 5xx and retryable answers are retried; an
   * attempt still waiting then (a daemon that accepts connections but does
   * not answer: frozen, overloaded) is given up. Several requests of one
   * command share one deadline. None: one attempt, no time limit.
   */
  deadline?: number;
}

export interface FollowOptions {
  after?: number;
  signal?: AbortSignal;
  /** Live text of model replies; `reset`: the model call is being retried and the text so far is void. */
  onDelta?: (run: string, text: string, reset?: boolean, retry?: ModelRetry) => void;
}

/** Told about each retry, so a command can say what it waits for. */
export type RetryListener = (attempt: number, error: WardrikError, elapsedMs: number) => void;

const RETRY_BASE_MS = 200;
/** The status of an error that no daemon gave: the connection failed or broke before an answer. */
const NO_ANSWER = 0;

/** True when no daemon answered at all (as opposed to a daemon answering with an error). */
export function isNoAnswer(e: WardrikError): boolean {
  return e.code === "unavailable" && e.status === NO_ANSWER;
}
const RETRY_CAP_MS = 2000;

/**
 * The CLI's HTTP client: the same routes as `@wardrik/sdk`'s WardrikClient,
 * plus what a command line needs on top: the admin token acting in another
 * org (`Wardrik-Org`, for `org/name`), an `Idempotency-Key` on every POST,
 * and retries of the very same request across a daemon restart.
 */
export class DaemonClient {
  onRetry: RetryListener | undefined;

  constructor(
    readonly url: string,
    /** The bearer token (`wardrik mcp serve` passes it on to /v1/mcp). */
    readonly token: string,
    /** The org to act in (admin token only), or undefined for the token's own. */
    readonly org?: string,
  ) {
    this.url = url.replace(/\/+$/, "");
  }

  /** The same daemon and token, acting in `org`. */
  inOrg(org: string | undefined): DaemonClient {
    const c = new DaemonClient(this.url, this.token, org);
    c.onRetry = this.onRetry;
    return c;
  }

  private headers(extra: Record<string, string> = {}): Record<string, string> {
    return { authorization: `Bearer ${this.token}`, ...(this.org !== undefined ? { "wardrik-org": this.org } : {}), ...extra };
  }

  async request<T>(method: string, path: string, body?: unknown, options: RequestOptions = {}): Promise<T> {
    const key = options.idempotencyKey === null ? undefined : (options.idempotencyKey ?? (method === "POST" ? randomUUID() : undefined));
    const started = Date.now();
    const deadline = options.deadline;
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.once<T>(method, path, body, key, deadline);
      } catch (err) {
        const e = WardrikError.isInstance(err) ? err : new WardrikError("internal", String(err));
        const left = deadline === undefined ? 0 : deadline - Date.now();
        if (!e.retryable || left <= 0) throw e;
        this.onRetry?.(attempt, e, Date.now() - started);
        const backoff = Math.min(RETRY_CAP_MS, RETRY_BASE_MS * 2 ** (attempt - 1));
        await new Promise((r) => setTimeout(r, Math.min(backoff * (0.5 + Math.random() / 2), left)));
        // No attempt with no time left: the last real error says more than "gave up".
        if (deadline !== undefined && Date.now() >= deadline) throw e;
      }
    }
  }

  private async once<T>(method: string, path: string, body: unknown, key: string | undefined, deadline?: number): Promise<T> {
    let res: HttpAnswer;
    const signal = deadline === undefined ? undefined : AbortSignal.timeout(Math.max(0, deadline - Date.now()));
    try {
      res = await sendRequest(this.url + path, {
        method,
        headers: this.headers({
          ...(body !== undefined ? { "content-type": "application/json" } : {}),
          ...(key !== undefined ? { "idempotency-key": key } : {}),
        }),
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
        ...(signal ? { signal } : {}),
      });
    } catch (err) {
      if (signal?.aborted)
        throw new WardrikError("unavailable", `The Wardrik daemon at ${this.url} did not answer before the deadline; gave up.`, {
          retryable: true,
          status: NO_ANSWER,
        });
      const cause = err instanceof NoAnswerError ? err.code : (err as Error).message;
      throw new WardrikError("unavailable", `Cannot reach the Wardrik daemon at ${this.url}: ${cause}. Is \`wardrik daemon\` running?`, {
        retryable: true,
        status: NO_ANSWER,
      });
    }
    const text = res.text;
    let json: unknown;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      if (res.status < 200 || res.status > 299) throw WardrikError.fromResponse(res.status, undefined);
      throw new WardrikError("internal", `The daemon answered ${res.status} with a body that is not JSON.`, {
        retryable: res.status >= 500,
      });
    }
    if (res.status < 200 || res.status > 299) throw WardrikError.fromResponse(res.status, json);
    if (json === undefined)
      throw new WardrikError("internal", `The daemon answered ${res.status} with an empty body.`, { retryable: true });
    return json as T;
  }

  async listAgents(): Promise<AgentSummary[]> {
    return (await this.request<{ agents: AgentSummary[] }>("GET", "/v1/agents")).agents;
  }

  async findAgent(name: string, options: RequestOptions = {}): Promise<AgentSummary | undefined> {
    const { agents } = await this.request<{ agents: AgentSummary[] }>("GET", `/v1/agents?name=${enc(name)}`, undefined, options);
    return agents[0];
  }

  getAgent(id: string): Promise<AgentDetail> {
    return this.request("GET", `/v1/agents/${enc(id)}`);
  }

  agentTools(id: string): Promise<AgentTools> {
    return this.request("GET", `/v1/agents/${enc(id)}/tools`);
  }

  removeAgent(id: string): Promise<{ ok: true }> {
    return this.request("DELETE", `/v1/agents/${enc(id)}`);
  }

  sendMessage(id: string, text: string, conversation: string, options: RequestOptions = {}): Promise<PostMessageResult> {
    return this.request("POST", `/v1/agents/${enc(id)}/messages`, { text, conversation }, options);
  }

  getTurn(id: string, run: string): Promise<TurnView> {
    return this.request("GET", `/v1/agents/${enc(id)}/turns/${enc(run)}`);
  }

  history(
    id: string,
    conversation: string,
  ): Promise<{ summary: string | null; messages: { seq: number; role: string; run?: string; content: unknown; created_at: string }[] }> {
    return this.request("GET", `/v1/agents/${enc(id)}/conversations/${enc(conversation)}/messages`);
  }

  fork(id: string, conversation: string, at: number, as?: string): Promise<ForkResult> {
    return this.request("POST", `/v1/agents/${enc(id)}/conversations/${enc(conversation)}/fork`, {
      at,
      ...(as !== undefined ? { as } : {}),
    });
  }

  /** A replay runs model calls: its answer is kept for a retry with the same key, so a retry does not pay twice. */
  replay(id: string, body: ReplayBody): Promise<ReplayReport> {
    return this.request("POST", `/v1/agents/${enc(id)}/replays`, body);
  }

  cancel(id: string, conversation?: string): Promise<{ cancelled: string[]; dropped: number }> {
    return this.request("POST", `/v1/agents/${enc(id)}/cancel`, conversation ? { conversation } : {});
  }

  clear(id: string, conversation?: string): Promise<{ cleared: string[] }> {
    return this.request("POST", `/v1/agents/${enc(id)}/clear`, conversation ? { conversation } : {});
  }

  decide(
    id: string,
    call: string,
    verb: "kill" | "approve" | "deny",
    reason?: string,
    args?: Record<string, unknown>,
  ): Promise<{ call: string; status: string; tool: string }> {
    const body = reason ? { reason } : args ? { arguments: args } : {};
    return this.request("POST", `/v1/agents/${enc(id)}/calls/${enc(call)}/${verb}`, body);
  }

  /** A one-time sign-in link for the web console, made for this client's token. */
  createConsoleLink(): Promise<{ url: string; expires_at: string }> {
    return this.request("POST", "/v1/console/links", {});
  }

  listNodes(): Promise<NodeList> {
    return this.request<NodeList>("GET", "/v1/nodes");
  }

  createToken(org: string, name?: string): Promise<{ org: string; name: string; token: string }> {
    // The daemon refuses a key here (a token's secret is never kept to answer a retry with).
    return this.request("POST", "/v1/tokens", { org, ...(name ? { name } : {}) }, { idempotencyKey: null });
  }

  setSecret(name: string, value: string): Promise<{ name: string; stored: true }> {
    return this.request("POST", `/v1/secrets/${enc(name)}`, { value });
  }

  listSecrets(): Promise<SecretNames> {
    return this.request<SecretNames>("GET", "/v1/secrets");
  }

  /** Older daemons leave out the lists added since. */
  reload(): Promise<Omit<ReloadResult, "warnings"> & { warnings?: ReloadResult["warnings"] }> {
    return this.request("POST", "/v1/reload", {});
  }

  deliveries(query: { status?: "pending" | "delivered" | "failed"; limit?: number; cursor?: string } = {}): Promise<DeliveryPage> {
    const q = new URLSearchParams();
    if (query.status) q.set("status", query.status);
    if (query.limit !== undefined) q.set("limit", String(query.limit));
    if (query.cursor) q.set("cursor", query.cursor);
    const qs = q.toString();
    return this.request("GET", `/v1/deliveries${qs ? `?${qs}` : ""}`);
  }

  retryDelivery(id: string): Promise<DeliveryView> {
    return this.request("POST", `/v1/deliveries/${enc(id)}/retry`, {});
  }

  async listMcpServers(connect = true): Promise<McpServerView[]> {
    return (await this.request<{ servers: McpServerView[] }>("GET", `/v1/mcp-servers?connect=${connect}`)).servers;
  }

  getMcpServer(name: string, connect = false): Promise<McpServerView> {
    return this.request("GET", `/v1/mcp-servers/${enc(name)}?connect=${connect}`);
  }

  loginMcpServer(name: string): Promise<McpLoginResult> {
    return this.request("POST", `/v1/mcp-servers/${enc(name)}/login`, {});
  }

  logoutMcpServer(name: string): Promise<McpLogoutResult> {
    return this.request("POST", `/v1/mcp-servers/${enc(name)}/logout`, {});
  }

  events(id: string, after = 0, limit = 1000, options: RequestOptions = {}): Promise<{ events: WardrikCloudEvent[]; last_seq: number }> {
    return this.request("GET", `/v1/agents/${enc(id)}/events?after=${after}&limit=${limit}`, undefined, options);
  }

  /**
   * Follows an agent's events live (server-sent events), reconnecting with
   * Last-Event-ID after a dropped connection (a daemon restart), until the signal aborts.
   */
  async *follow(id: string, options: FollowOptions = {}): AsyncGenerator<WardrikCloudEvent> {
    let after = options.after ?? 0;
    let failures = 0;
    while (!options.signal?.aborted) {
      let res: HttpStream;
      try {
        res = await openStream(`${this.url}/v1/agents/${enc(id)}/events/stream`, {
          headers: this.headers({ accept: "text/event-stream", "last-event-id": String(after) }),
          ...(options.signal ? { signal: options.signal } : {}),
        });
      } catch (err) {
        if (options.signal?.aborted) return;
        if (++failures > 30) throw err;
        await new Promise((r) => setTimeout(r, Math.min(2000, 100 * failures)));
        continue;
      }
      if (res.status < 200 || res.status > 299) {
        const text = await res.text();
        let body: unknown;
        try {
          body = JSON.parse(text);
        } catch {
          // not a problem document: the status alone
        }
        throw WardrikError.fromResponse(res.status, body);
      }
      failures = 0;
      try {
        for await (const msg of parseSse(res.body)) {
          if (msg.event === "delta") {
            const d = JSON.parse(msg.data) as { run: string; text: string; reset?: boolean; retry?: ModelRetry };
            options.onDelta?.(d.run, d.text, d.reset, d.retry);
            continue;
          }
          const event = JSON.parse(msg.data) as WardrikCloudEvent;
          after = event.seq;
          yield event;
        }
      } catch (err) {
        if (options.signal?.aborted) return;
        // A connection cut mid-stream (a daemon restart): follow again from the last event.
        if (!isCutOff(err)) throw err;
      }
    }
  }
}

/** Whether reading a streamed answer failed because its connection broke (not a bad event). */
function isCutOff(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException).code;
  return code === "ECONNRESET" || code === "ERR_STREAM_PREMATURE_CLOSE" || code === "EPIPE" || (err as Error).message === "aborted";
}

function enc(s: string): string {
  return encodeURIComponent(s);
}
