/**
 * The console's client of the daemon: `@wardrik/sdk`'s WardrikClient (its
 * browser-safe entry), the same client a script or the CLI uses, so anything
 * the console does a script can do too. Every request and event stream goes
 * through it, only to the public API under /v1/, with the signed-in token.
 * The daemon's address is the page's own: the page may be served under a
 * proxy's path.
 */
import type {
  AgentDetail,
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
import { WardrikClient, type CallVerb, type EventQuery, type SseMessage } from "@wardrik/sdk/client";

export type { EventQuery };

export interface Session {
  token: string;
  /** The org the token belongs to. */
  tokenOrg: string;
  admin: boolean;
  /** The org the console acts in: the token's own, or (admin token) the one picked. */
  org: string;
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

/** How the page follows an event stream: told each frame, and whether the stream is connected. */
export interface StreamOptions {
  signal: AbortSignal;
  onFrame: (frame: SseMessage) => void;
  onState?: (state: "live" | "reconnecting" | "stopped", why?: string) => void;
}

/** The daemon's address: where the page came from, without its trailing slash. */
function daemonUrl(): string {
  return new URL(".", document.baseURI).href.replace(/\/+$/, "");
}

export class Api {
  readonly client: WardrikClient;

  constructor(
    readonly session: Session,
    private readonly onUnauthorized: () => void = () => undefined,
  ) {
    const org = session.admin && session.org !== session.tokenOrg ? session.org : undefined;
    this.client = new WardrikClient({ url: daemonUrl(), token: session.token, org });
  }

  // Agents

  agents(): Promise<AgentSummary[]> {
    return this.call(this.client.listAgents());
  }

  agent(id: string): Promise<AgentDetail> {
    return this.call(this.client.getAgent(id));
  }

  tools(agentId: string): Promise<AgentTools> {
    return this.call(this.client.agentTools(agentId));
  }

  // Conversations and turns

  /** Queues a message; a conversation that does not exist yet starts with it. */
  sendMessage(agentId: string, conversation: string, text: string): Promise<PostMessageResult> {
    return this.call(this.client.sendMessage(agentId, text, conversation));
  }

  history(agentId: string, conversation: string, after: number, limit: number): Promise<HistoryPage> {
    return this.call(this.client.history(agentId, conversation, { after, limit }));
  }

  turns(agentId: string, conversation: string, cursor?: string): Promise<TurnList> {
    return this.call(this.client.turns(agentId, conversation, { limit: 50, ...(cursor !== undefined ? { cursor } : {}) }));
  }

  turn(agentId: string, run: string): Promise<TurnView> {
    return this.call(this.client.getTurn(agentId, run));
  }

  cancel(agentId: string, conversation: string): Promise<unknown> {
    return this.call(this.client.cancel(agentId, conversation));
  }

  clear(agentId: string, conversation: string): Promise<unknown> {
    return this.call(this.client.clear(agentId, conversation));
  }

  // Calls

  /** Approve (with edited arguments, or as the model asked), deny (with a reason) or kill a call. */
  decide(
    agentId: string,
    call: string,
    verb: CallVerb,
    body: { reason?: string; arguments?: Record<string, unknown> } = {},
  ): Promise<unknown> {
    return this.call(this.client.decide(agentId, call, verb, body.reason, body.arguments));
  }

  /** Answers the question of a person/ask call that waits for a person. */
  answer(agentId: string, call: string, answer: string): Promise<unknown> {
    return this.call(this.client.answer(agentId, call, answer));
  }

  // Events

  events(agentId: string, q: EventQuery): Promise<EventPage> {
    return this.call(this.client.events(agentId, q));
  }

  /** One agent's events as they happen, from after `after`, with `delta` frames of model text. */
  followAgent(agentId: string, after: number, opts: StreamOptions): void {
    void this.follow(`/v1/agents/${encodeURIComponent(agentId)}/events/stream`, String(after), opts);
  }

  /** Every agent's events of the org from now on. */
  followOrg(opts: StreamOptions): void {
    void this.follow("/v1/events/stream?live=only", undefined, opts);
  }

  /** Follows a stream until the signal aborts, reconnecting for as long as it takes; stops for good on an answer retrying cannot fix. */
  private async follow(path: string, lastEventId: string | undefined, opts: StreamOptions): Promise<void> {
    try {
      const frames = this.client.stream(path, {
        signal: opts.signal,
        maxFailures: Infinity,
        ...(lastEventId !== undefined ? { lastEventId } : {}),
        ...(opts.onState ? { onState: opts.onState } : {}),
      });
      for await (const frame of frames) opts.onFrame(frame);
    } catch (e) {
      if (opts.signal.aborted) return;
      if ((e as { status?: unknown }).status === 401) this.onUnauthorized();
      opts.onState?.("stopped", `The event stream was refused: ${messageOf(e)}`);
    }
  }

  /** A request's answer; a refused token signs the page out. */
  private async call<T>(answer: Promise<T>): Promise<T> {
    try {
      return await answer;
    } catch (e) {
      if ((e as { status?: unknown }).status === 401) this.onUnauthorized();
      throw e;
    }
  }
}

/** Who a token is: its org, whether it is the admin token, and the orgs it may act in. */
export function whoAmI(token: string): Promise<WhoAmI> {
  return new WardrikClient({ url: daemonUrl(), token }).whoAmI();
}

/** Trades the code of a sign-in link (`wardrik console`) for the token it was made with. */
export function tradeSignInCode(code: string): Promise<ConsoleSession> {
  return new WardrikClient({ url: daemonUrl(), token: null }).tradeSignInCode(code);
}

export function messageOf(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
