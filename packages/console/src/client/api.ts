/**
 * The console's client of the daemon: every HTTP request and event stream the
 * page makes goes through this module (and its stream reader, event-stream.ts), and only to the public API under
 * /v1/, with the signed-in token, so anything the console does a script can
 * do too. Paths are relative: the page may be served under a proxy's path.
 */
import type {
  AgentDetail,
  AgentPage,
  AgentSummary,
  AgentTools,
  ConsoleSession,
  HistoryMessage,
  PostMessageResult,
  TurnList,
  TurnView,
  WardrikCloudEvent,
  WhoAmI,
} from "@wardrik/protocol";
import { follow, type FollowOptions } from "./event-stream";

export interface Session {
  token: string;
  /** The org the token belongs to. */
  tokenOrg: string;
  admin: boolean;
  /** The org the console acts in: the token's own, or (admin token) the one picked. */
  org: string;
}

/** An answer that was not a success, with the API's message. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** `GET /v1/agents/{id}/events` (the protocol exports its schema, not a type). */
export interface EventPage {
  events: WardrikCloudEvent[];
  last_seq: number;
}

/** `GET .../conversations/{key}/messages`. */
export interface HistoryPage {
  messages: HistoryMessage[];
  summary: string | null;
}

/** What `GET /v1/agents/{id}/events` can narrow to; every filter applies in the daemon, before the limit. */
export interface EventQuery {
  after: number;
  limit: number;
  types?: string[];
  run?: string;
  /** Text the event's data holds. */
  text?: string;
}

type StreamOptions = Omit<FollowOptions, "headers">;

export class Api {
  constructor(
    readonly session: Session,
    private readonly onUnauthorized: () => void = () => undefined,
  ) {}

  /** The headers every request carries: the token, and the org for the admin token acting in another. */
  headers(): Record<string, string> {
    const h: Record<string, string> = { authorization: `Bearer ${this.session.token}` };
    if (this.session.admin && this.session.org !== this.session.tokenOrg) h["wardrik-org"] = this.session.org;
    return h;
  }

  // Agents

  /** Every agent of the org, every page. */
  async agents(): Promise<AgentSummary[]> {
    const out: AgentSummary[] = [];
    for (let cursor: string | null = ""; cursor !== null;) {
      const page: AgentPage = await this.get<AgentPage>(`v1/agents?limit=1000${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`);
      out.push(...page.agents);
      cursor = page.next;
    }
    return out;
  }

  agent(id: string): Promise<AgentDetail> {
    return this.get(`v1/agents/${id}`);
  }

  tools(agentId: string): Promise<AgentTools> {
    return this.get(`v1/agents/${agentId}/tools`);
  }

  // Conversations and turns

  /** Queues a message; a conversation that does not exist yet starts with it. */
  sendMessage(agentId: string, conversation: string, text: string): Promise<PostMessageResult> {
    return this.post(`v1/agents/${agentId}/messages`, { text, conversation });
  }

  history(agentId: string, conversation: string, after: number, limit: number): Promise<HistoryPage> {
    return this.get(`v1/agents/${agentId}/conversations/${encodeURIComponent(conversation)}/messages?after=${after}&limit=${limit}`);
  }

  turns(agentId: string, conversation: string, cursor?: string): Promise<TurnList> {
    const more = cursor === undefined ? "" : `&cursor=${encodeURIComponent(cursor)}`;
    return this.get(`v1/agents/${agentId}/conversations/${encodeURIComponent(conversation)}/turns?limit=50${more}`);
  }

  turn(agentId: string, run: string): Promise<TurnView> {
    return this.get(`v1/agents/${agentId}/turns/${run}`);
  }

  cancel(agentId: string, conversation: string): Promise<unknown> {
    return this.post(`v1/agents/${agentId}/cancel`, { conversation });
  }

  clear(agentId: string, conversation: string): Promise<unknown> {
    return this.post(`v1/agents/${agentId}/clear`, { conversation });
  }

  // Calls

  /** Approve (with edited arguments, or as the model asked), deny (with a reason) or kill a call. */
  decide(agentId: string, call: string, verb: "approve" | "deny" | "kill", body: object = {}): Promise<unknown> {
    return this.post(`v1/agents/${agentId}/calls/${call}/${verb}`, body);
  }

  // Events

  events(agentId: string, q: EventQuery): Promise<EventPage> {
    const params = new URLSearchParams({ after: String(q.after), limit: String(q.limit) });
    if (q.types && q.types.length > 0) params.set("type", q.types.join(","));
    if (q.run !== undefined) params.set("run", q.run);
    if (q.text !== undefined) params.set("q", q.text);
    return this.get(`v1/agents/${agentId}/events?${params.toString()}`);
  }

  /** One agent's events as they happen, from after `after`, with `delta` frames of model text. */
  followAgent(agentId: string, after: number, opts: StreamOptions): void {
    follow(`v1/agents/${agentId}/events/stream?after=${after}`, { ...opts, headers: () => this.headers() });
  }

  /** Every agent's events of the org from now on. */
  followOrg(opts: StreamOptions): void {
    follow("v1/events/stream?live=only", { ...opts, headers: () => this.headers() });
  }

  // Plumbing

  get<T>(path: string): Promise<T> {
    return this.request<T>("GET", path);
  }

  post<T>(path: string, body: unknown = {}): Promise<T> {
    return this.request<T>("POST", path, body);
  }

  async request<T>(method: string, path: string, body?: unknown): Promise<T> {
    const res = await send(path, {
      method,
      headers: { ...this.headers(), ...(body === undefined ? {} : { "content-type": "application/json" }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    if (res.status === 401) this.onUnauthorized();
    return readAnswer<T>(res);
  }
}

/** Who a token is: its org, whether it is the admin token, and the orgs it may act in. */
export async function whoAmI(token: string): Promise<WhoAmI> {
  return readAnswer<WhoAmI>(await send("v1/whoami", { headers: { authorization: `Bearer ${token}` } }));
}

/** Trades the code of a sign-in link (`wardrik console`) for the token it was made with. */
export async function tradeSignInCode(code: string): Promise<ConsoleSession> {
  const res = await send("v1/console/sessions", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ code }),
  });
  return readAnswer<ConsoleSession>(res);
}

/** fetch, with "no answer at all" as an ApiError that says so. */
async function send(path: string, init: RequestInit): Promise<Response> {
  try {
    return await fetch(path, init);
  } catch (e) {
    if (e instanceof DOMException && e.name === "AbortError") throw e;
    throw new ApiError(0, "unavailable", "The daemon did not answer. Is it running?");
  }
}

async function readAnswer<T>(res: Response): Promise<T> {
  const text = await res.text();
  let json: unknown;
  try {
    json = text === "" ? undefined : JSON.parse(text);
  } catch {
    json = undefined;
  }
  if (!res.ok) {
    // A problem document (RFC 9457): `code` and `detail`.
    const err = json as { code?: unknown; detail?: unknown } | undefined;
    throw new ApiError(
      res.status,
      typeof err?.code === "string" ? err.code : "error",
      typeof err?.detail === "string" ? err.detail : `The daemon answered ${res.status} ${res.statusText}.`,
    );
  }
  return json as T;
}

export function messageOf(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
