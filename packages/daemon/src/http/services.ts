import type { AgentDetail, AgentTools, ToolPatternProblem, TurnView } from "@wardrik/protocol";
import type { EventBus } from "../events/event-bus.js";
import type { McpServers } from "../tools/mcp/mcp-servers.js";
import type { Runtime } from "../runtime/runtime.js";
import type { SecretStore } from "../store/secrets.js";
import type { AgentRow, Store, TurnRow } from "../store/store.js";

/** What the HTTP layer needs from the daemon; the CLI reaches all of it through HTTP. */
export interface ApiServices {
  org: string;
  store: Store;
  secrets: SecretStore;
  runtime: Runtime;
  bus: EventBus;
  /** `warnings`: tool patterns of the loaded agents that match nothing. */
  reload(): Promise<{
    added: string[];
    updated: string[];
    removed: string[];
    unreadable: string[];
    warnings: (ToolPatternProblem & { agent: string })[];
  }>;
  describeAgent(row: AgentRow): Promise<AgentDetail>;
  describeTools(row: AgentRow): Promise<AgentTools>;
  describeTurn(turn: TurnRow): Promise<TurnView>;
  /** The MCP servers of config.yaml and their OAuth logins. */
  mcp: McpServers;
  /** Live text deltas of model replies (not stored). Returns an unsubscribe function. */
  onDelta(agentId: string, listener: (run: string, text: string, reset?: boolean) => void): () => void;
}
