import { shortType } from "@wardrik/protocol";
import type { StoredEvent } from "../events/event-bus.js";
import { queueMessage } from "../http/queue-message.js";
import type { ApiServices } from "../http/services.js";
import type { AgentRow } from "../store/rows.js";
import type { AskArguments } from "./agent-tool.js";
import { ownLookMs } from "../events/own-look.js";
import { AgentFollower } from "./follow-agent.js";

/** While nothing happens (a long model call, a tool, an approval), a progress notification this often keeps the client waiting. */
export const HEARTBEAT_MS = 15_000;

/** A call that waits for a person, and how to decide it. */
export interface WaitingApproval {
  call: string;
  tool: string;
  args: unknown;
  reason?: string;
  approve: string;
  deny: string;
  approve_route: string;
  deny_route: string;
}

export type AskOutcome =
  | { status: "completed"; run: string; reply: string }
  | { status: "waiting_for_approval"; run: string; approvals: WaitingApproval[]; queuedBehind: boolean }
  | { status: "failed" | "cancelled" | "dropped" | "stopped"; run?: string; reason: string };

export interface AskOptions {
  svc: ApiServices;
  agent: AgentRow;
  args: AskArguments;
  /** How commands printed for a person name the agent: NAME, or ORG/NAME outside the daemon's own org. */
  ref: string;
  /** The client went away or the daemon stops: stop waiting (the turn goes on). */
  signal: AbortSignal;
  /** Tells the client what the agent is doing (an MCP progress notification). */
  progress: (message: string) => Promise<void>;
}

/**
 * An MCP client's message to an agent: queued like `POST .../messages`, then
 * followed until the turn that takes it ends, with progress for model and
 * tool calls. A call that waits for approval ends the wait with how to
 * decide it, unless the client asked to wait for the decision.
 */
export async function askAgent(o: AskOptions): Promise<AskOutcome> {
  const { svc, agent, args } = o;
  const conversation = args.conversation ?? "main";
  const follower = new AgentFollower(svc.store, svc.bus, agent.id, await svc.store.events.lastSeq(agent.id), ownLookMs(svc.store.db));
  try {
    const queued = await queueMessage(svc, agent, conversation, args.message);
    await o.progress(`Queued for ${agent.name} (conversation ${conversation}).`);
    const watch = new TurnWatch(o, queued.message, conversation);
    // The conversation may be busy with a turn that waits for a person: this message waits behind it.
    const ahead = await parkedAhead(o, queued.conversation_id, queued.message);
    if (ahead) {
      if (!args.wait_for_approval) return { status: "waiting_for_approval", ...ahead, queuedBehind: true };
      await o.progress(`Queued behind turn ${ahead.run}, which waits for approval of ${describeCalls(ahead.approvals)}.`);
    }
    for (;;) {
      const events = await follower.next(HEARTBEAT_MS, o.signal);
      if (o.signal.aborted) return { status: "stopped", ...(watch.run ? { run: watch.run } : {}), reason: "stopped waiting" };
      if (events.length === 0) {
        await o.progress(watch.heartbeat());
        continue;
      }
      for (const e of events) {
        const end = await watch.event(e);
        if (end) return end;
      }
      if (watch.waiting.size > 0 && !args.wait_for_approval) {
        return { status: "waiting_for_approval", run: watch.run!, approvals: [...watch.waiting.values()], queuedBehind: false };
      }
    }
  } finally {
    follower.close();
  }
}

/** Follows the turn that takes one message. */
class TurnWatch {
  run: string | undefined;
  readonly waiting = new Map<string, WaitingApproval>();
  private doing = "waiting for the turn to start";

  constructor(
    private readonly o: AskOptions,
    private readonly message: string,
    private readonly conversation: string,
  ) {}

  heartbeat(): string {
    return `Still ${this.doing}.`;
  }

  async event(e: StoredEvent): Promise<AskOutcome | undefined> {
    const type = shortType(e.type);
    const data = e.data;
    if (!this.run) {
      if (type === "turn.started" && Array.isArray(data.messages) && data.messages.includes(this.message)) {
        this.run = e.run;
        this.doing = "working";
        await this.o.progress(`${this.o.agent.name} started turn ${this.run}.`);
      } else if (type === "messages.dropped" && (data.conversation === undefined || data.conversation === this.conversation)) {
        return { status: "dropped", reason: "the message was dropped: the agent was cancelled before its turn started" };
      }
      return undefined;
    }
    if (e.run !== this.run) return undefined;
    const tool = String(data.tool);
    const call = String(data.call);
    switch (type) {
      case "model.called":
        this.doing = `waiting for the model${typeof data.model === "string" ? ` (${data.model})` : ""}`;
        await this.o.progress(`Calling the model${typeof data.model === "string" ? ` (${data.model})` : ""}.`);
        break;
      case "call.started":
        this.doing = `running ${tool}`;
        await this.o.progress(`Running ${tool} (${call}).`);
        break;
      case "call.completed":
        await this.o.progress(`${tool} finished.`);
        break;
      case "call.failed":
      case "call.killed":
      case "call.timed_out":
        await this.o.progress(`${tool} failed: ${String(data.error)}`);
        break;
      case "call.decided":
        if (data.decision === "deny") await this.o.progress(`${tool} was refused by the policy: ${String(data.reason)}`);
        break;
      case "approval.requested": {
        const a = approval(this.o, { id: call, tool, args: data.args, reason: typeof data.reason === "string" ? data.reason : null });
        this.waiting.set(call, a);
        this.doing = `waiting for a person to approve ${describeCalls([...this.waiting.values()])}`;
        if (this.o.args.wait_for_approval) await this.o.progress(`${tool} (${call}) waits for approval: ${a.approve}`);
        break;
      }
      case "approval.granted":
      case "approval.denied":
        this.waiting.delete(call);
        this.doing = "working";
        await this.o.progress(`${call} was ${type === "approval.granted" ? "approved" : "denied"}.`);
        break;
      case "turn.completed":
        return { status: "completed", run: this.run, reply: String(data.reply ?? "") };
      case "turn.failed":
      case "turn.cancelled":
        return { status: type === "turn.failed" ? "failed" : "cancelled", run: this.run, reason: String(data.reason ?? "") };
    }
    return undefined;
  }
}

/** A parked turn of the conversation that the new message has to wait for, with its waiting calls. */
async function parkedAhead(
  o: AskOptions,
  conversationId: string,
  message: string,
): Promise<{ run: string; approvals: WaitingApproval[] } | undefined> {
  const parked = (await o.svc.store.turns.open(o.agent.id)).find((t) => t.conversation_id === conversationId && t.status === "parked");
  // The message's own turn may have started and parked already: the events say that.
  if (!parked || (await o.svc.store.inputs.ofTurn(parked.id)).includes(message)) return undefined;
  const calls = (await o.svc.store.calls.waiting(o.agent.id)).filter((c) => c.run === parked.id);
  if (calls.length === 0) return undefined;
  return {
    run: parked.id,
    approvals: calls.map((c) => approval(o, { id: c.id, tool: c.tool, args: parseJson(c.args), reason: c.reason })),
  };
}

function approval(o: AskOptions, c: { id: string; tool: string; args: unknown; reason: string | null }): WaitingApproval {
  const route = `/v1/agents/${o.agent.id}/calls/${c.id}`;
  return {
    call: c.id,
    tool: c.tool,
    args: c.args,
    ...(c.reason ? { reason: c.reason } : {}),
    approve: `wardrik approve ${o.ref} ${c.id}`,
    deny: `wardrik deny ${o.ref} ${c.id} --reason "..."`,
    approve_route: `POST ${route}/approve`,
    deny_route: `POST ${route}/deny`,
  };
}

export function describeCalls(approvals: WaitingApproval[]): string {
  return approvals.map((a) => `${a.tool} (${a.call})`).join(", ");
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}
