import type { ToolCallContext, ToolInfo, ToolOutcome, ToolScope, Toolset } from "./toolset.js";

/** The namespace of the tools that call other agents: `agents/NAME`. */
export const AGENTS_NAMESPACE = "agents";

const MAX_MESSAGE = 100_000;
const MAX_CONVERSATION = 200;
const CONVERSATION_RULE = /^[A-Za-z0-9._:/-]+$/;

/** An agents/NAME call's arguments once checked. */
export interface Delegation {
  message: string;
  conversation?: string | undefined;
}

/** What an agents/NAME call's arguments ask for, or what is wrong with them (told to the model). */
export function readDelegation(args: unknown): Delegation | { error: string } {
  const a = args as Record<string, unknown> | null;
  if (typeof a !== "object" || a === null || Array.isArray(a)) return { error: "arguments must be an object { message, conversation? }" };
  const extra = Object.keys(a).filter((k) => k !== "message" && k !== "conversation");
  if (extra.length > 0) return { error: `unknown argument ${extra[0]}; an agents/ tool takes message and conversation` };
  if (typeof a.message !== "string" || a.message.trim() === "") return { error: "message must be a non-empty string" };
  if (a.message.length > MAX_MESSAGE) return { error: `message is longer than ${MAX_MESSAGE} characters` };
  if (a.conversation === undefined) return { message: a.message };
  if (typeof a.conversation !== "string" || a.conversation.length > MAX_CONVERSATION || !CONVERSATION_RULE.test(a.conversation))
    return { error: `conversation must be 1 to ${MAX_CONVERSATION} letters, digits or . _ : / -` };
  return { message: a.message, conversation: a.conversation };
}

/** What the agents toolset needs from the runtime: who an agent may call, and a call run as a child turn. */
export interface SubAgentHost {
  /** The agents `agentId` may call (its `agents` key) that exist in its org, with their descriptions. */
  callable(scope: ToolScope): Promise<{ name: string; description: string }[]>;
  /** Runs (or, after a restart, finds again) the child turn of an agents/NAME call and answers with its end. */
  run(child: string, delegation: Delegation, ctx: ToolCallContext): Promise<ToolOutcome>;
}

/**
 * The `agents` namespace: each agent named in an agent's `agents` key is
 * offered to it as the tool agents/NAME. The runtime (SubAgentHost, attached
 * once it exists) runs a call as a turn of that agent, its child turn.
 */
export class AgentsToolset implements Toolset {
  readonly namespace = AGENTS_NAMESPACE;
  readonly kind = "agents" as const;
  // A call lasts as long as its child turn: the child's own timeout bounds it, and the parent's turn timeout cancels it.
  readonly untimed = true;
  private host: SubAgentHost | undefined;

  attach(host: SubAgentHost): void {
    this.host = host;
  }

  async list(scope: ToolScope): Promise<ToolInfo[]> {
    if (!this.host) return [];
    return (await this.host.callable(scope)).map((a) => ({
      name: `${AGENTS_NAMESPACE}/${a.name}`,
      description: `Send a message to agent ${a.name} and get its reply. It is: ${a.description}`,
      inputSchema: {
        type: "object",
        properties: {
          message: { type: "string", description: `What to ask ${a.name}` },
          conversation: {
            type: "string",
            description: "A conversation of your own with it, to keep apart from others; default: one per conversation of yours",
          },
        },
        required: ["message"],
        additionalProperties: false,
      },
      readOnly: false,
      idempotent: true,
    }));
  }

  async call(tool: string, args: unknown, ctx: ToolCallContext): Promise<ToolOutcome> {
    const delegation = readDelegation(args);
    if ("error" in delegation)
      return { ok: false, kind: "failed", error: `The arguments of agents/${tool} are wrong: ${delegation.error}.` };
    if (!this.host) return { ok: false, kind: "unavailable", error: "Agents cannot be called yet (the daemon is starting)." };
    return this.host.run(tool, delegation, ctx);
  }
}
