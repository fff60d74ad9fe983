import type {
  AgentDetail,
  AgentPage,
  AgentSummary,
  AgentTools,
  ConsoleSession,
  CreateAgentBody,
  DeliveryPage,
  DeliveryView,
  ForkResult,
  HistoryMessage,
  McpLoginResult,
  McpLogoutResult,
  McpServerView,
  ModelRetry,
  NodeList,
  PostMessageResult,
  ReloadResult,
  ReplayBody,
  ReplayReport,
  SecretNames,
  TurnList,
  TurnView,
  WardrikCloudEvent,
  WhoAmI,
} from "@wardrik/protocol";
import { ClientCore, type ClientOptions, type RequestOptions, type StreamOptions } from "./client-core.js";

export interface FollowOptions extends Omit<StreamOptions, "lastEventId"> {
  /** Events after this sequence number; 0 (the first) when left out. */
  after?: number;
  /**
   * Only one conversation's events (its key, as sent with messages): its messages queued and dropped, and every
   * event and live text of its turns. The daemon filters, so a client following its own turns is not sent the rest.
   */
  conversation?: string;
  /** Only one turn's events and live text (its run ID). */
  run?: string;
  /** Live text deltas of model replies, as they stream. `reset`: the model call is being retried and the text so far is void. */
  onDelta?: (run: string, text: string, reset?: boolean, retry?: ModelRetry) => void;
}

/** What `events` narrows to; every filter applies in the daemon, before the limit. */
export interface EventQuery {
  after?: number;
  limit?: number;
  types?: string[];
  run?: string;
  /** Text the event's data holds. */
  text?: string;
}

export type CallVerb = "kill" | "approve" | "deny";
export type CallActionAnswer = { call: string; status: string; tool: string };

/**
 * The HTTP API client: agents by ID, as the API takes them. The `wardrik` CLI
 * and the web console are built on it. Browser-safe (`@wardrik/sdk/client`).
 */
export class WardrikClient extends ClientCore {
  constructor(private readonly options: ClientOptions = {}) {
    super(options);
  }

  /** The same daemon and token, acting in `org` (admin token only; undefined: the token's own). */
  inOrg(org: string | undefined): WardrikClient {
    const c = new WardrikClient({ ...this.options, url: this.url, token: this.token, org });
    c.onRetry = this.onRetry;
    return c;
  }

  health(): Promise<{ ok: boolean; version: string }> {
    return this.request("GET", "/v1/health");
  }

  /** Who the token is: its org, whether it is the admin token, the orgs it can reach. */
  whoAmI(): Promise<WhoAmI> {
    return this.request("GET", "/v1/whoami");
  }

  /** Trades the code of a console sign-in link for the token it was made with (a client with `token: null` may call it). */
  tradeSignInCode(code: string): Promise<ConsoleSession> {
    return this.request("POST", "/v1/console/sessions", { code });
  }

  /** A one-time sign-in link for the web console, made for this client's token. */
  createConsoleLink(): Promise<{ url: string; expires_at: string }> {
    return this.request("POST", "/v1/console/links", {});
  }

  // Agents

  /** Every agent of the org, every page. */
  async listAgents(options: RequestOptions = {}): Promise<AgentSummary[]> {
    const out: AgentSummary[] = [];
    for (let cursor: string | null = ""; cursor !== null;) {
      const more = cursor ? `&cursor=${enc(cursor)}` : "";
      const page: AgentPage = await this.request<AgentPage>("GET", `/v1/agents?limit=1000${more}`, undefined, options);
      out.push(...page.agents);
      cursor = page.next ?? null;
    }
    return out;
  }

  /** Finds an agent of the org by name; undefined when there is none. */
  async findAgent(name: string, options: RequestOptions = {}): Promise<AgentSummary | undefined> {
    const { agents } = await this.request<{ agents: AgentSummary[] }>("GET", `/v1/agents?name=${enc(name)}`, undefined, options);
    return agents[0];
  }

  getAgent(id: string): Promise<AgentDetail> {
    return this.request("GET", `/v1/agents/${enc(id)}`);
  }

  /** The tools the agent may call now, with their input schemas. */
  agentTools(id: string): Promise<AgentTools> {
    return this.request("GET", `/v1/agents/${enc(id)}/tools`);
  }

  createAgent(body: CreateAgentBody): Promise<AgentSummary> {
    return this.request("POST", "/v1/agents", body);
  }

  removeAgent(id: string): Promise<{ ok: true }> {
    return this.request("DELETE", `/v1/agents/${enc(id)}`);
  }

  // Conversations and turns

  /** Queues a message; a conversation that does not exist yet starts with it ("main" when left out). */
  sendMessage(id: string, text: string, conversation?: string, options: RequestOptions = {}): Promise<PostMessageResult> {
    return this.request("POST", `/v1/agents/${enc(id)}/messages`, { text, ...(conversation ? { conversation } : {}) }, options);
  }

  getTurn(id: string, run: string): Promise<TurnView> {
    return this.request("GET", `/v1/agents/${enc(id)}/turns/${enc(run)}`);
  }

  /** A page of a conversation's turns, newest first; `cursor` from the page before. */
  turns(id: string, conversation: string, page: { limit?: number; cursor?: string } = {}): Promise<TurnList> {
    const q = new URLSearchParams({ limit: String(page.limit ?? 50) });
    if (page.cursor !== undefined) q.set("cursor", page.cursor);
    return this.request("GET", `/v1/agents/${enc(id)}/conversations/${enc(conversation)}/turns?${q.toString()}`);
  }

  /** A conversation's messages (every one, or a page of them), and its summary. */
  history(
    id: string,
    conversation = "main",
    page: { after?: number; limit?: number } = {},
  ): Promise<{ summary: string | null; messages: HistoryMessage[] }> {
    const q = new URLSearchParams();
    if (page.after !== undefined) q.set("after", String(page.after));
    if (page.limit !== undefined) q.set("limit", String(page.limit));
    const qs = q.toString();
    return this.request("GET", `/v1/agents/${enc(id)}/conversations/${enc(conversation)}/messages${qs ? `?${qs}` : ""}`);
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

  // Calls

  /** Kills, approves (`args`: with these arguments instead of the model's, checked against the tool's schema) or denies a call. */
  decide(id: string, call: string, verb: CallVerb, reason?: string, args?: Record<string, unknown>): Promise<CallActionAnswer> {
    const body = reason ? { reason } : args ? { arguments: args } : {};
    return this.request("POST", `/v1/agents/${enc(id)}/calls/${enc(call)}/${verb}`, body);
  }

  kill(id: string, call: string): Promise<CallActionAnswer> {
    return this.decide(id, call, "kill");
  }

  approve(id: string, call: string, args?: Record<string, unknown>): Promise<CallActionAnswer> {
    return this.decide(id, call, "approve", undefined, args);
  }

  deny(id: string, call: string, reason?: string): Promise<CallActionAnswer> {
    return this.decide(id, call, "deny", reason);
  }

  /** Answers the question of a waiting person/ask call: the answer becomes the call's result. */
  answer(id: string, call: string, answer: string): Promise<CallActionAnswer> {
    return this.request("POST", `/v1/agents/${enc(id)}/calls/${enc(call)}/answer`, { answer });
  }

  // Tokens, secrets, the project

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

  /** Reads the project's agents again. Older daemons leave out the lists added since. */
  reload(): Promise<Omit<ReloadResult, "warnings"> & { warnings?: ReloadResult["warnings"] }> {
    return this.request("POST", "/v1/reload", {});
  }

  listNodes(): Promise<NodeList> {
    return this.request<NodeList>("GET", "/v1/nodes");
  }

  // Webhook deliveries, MCP servers

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

  // Events

  /** A page of an agent's events. */
  events(id: string, query: EventQuery = {}, options: RequestOptions = {}): Promise<{ events: WardrikCloudEvent[]; last_seq: number }> {
    const q = new URLSearchParams({ after: String(query.after ?? 0), limit: String(query.limit ?? 1000) });
    if (query.types && query.types.length > 0) q.set("type", query.types.join(","));
    if (query.run !== undefined) q.set("run", query.run);
    if (query.text !== undefined) q.set("q", query.text);
    return this.request("GET", `/v1/agents/${enc(id)}/events?${q.toString()}`, undefined, options);
  }

  /**
   * Follows an agent's events live (server-sent events), reconnecting with
   * Last-Event-ID after a dropped connection (a daemon restart), until the signal aborts.
   */
  async *follow(id: string, options: FollowOptions = {}): AsyncGenerator<WardrikCloudEvent> {
    const { after = 0, onDelta, conversation, run, ...stream } = options;
    const q = new URLSearchParams();
    if (conversation !== undefined) q.set("conversation", conversation);
    if (run !== undefined) q.set("run", run);
    const qs = q.size > 0 ? `?${q.toString()}` : "";
    for await (const msg of this.stream(`/v1/agents/${enc(id)}/events/stream${qs}`, { ...stream, lastEventId: String(after) })) {
      if (msg.event === "delta") {
        const d = JSON.parse(msg.data) as { run: string; text: string; reset?: boolean; retry?: ModelRetry };
        onDelta?.(d.run, d.text, d.reset, d.retry);
        continue;
      }
      yield JSON.parse(msg.data) as WardrikCloudEvent;
    }
  }

  /** Follows every agent's events of the org from now on; each carries the `cursor` to resume after it. */
  async *followOrg(options: Omit<StreamOptions, "lastEventId"> = {}): AsyncGenerator<WardrikCloudEvent & { cursor: string }> {
    for await (const msg of this.stream("/v1/events/stream?live=only", options)) {
      if (msg.event === "event") yield JSON.parse(msg.data) as WardrikCloudEvent & { cursor: string };
    }
  }
}

function enc(s: string): string {
  return encodeURIComponent(s);
}
