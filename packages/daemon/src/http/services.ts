import type { AgentDetail, AgentTools, ToolPatternProblem, TurnView } from "@wardrik/protocol";
import type { EventBus } from "../events/event-bus.js";
import type { Runtime } from "../runtime/runtime.js";
import type { SlackService } from "../slack/slack-service.js";
import type { SecretStore } from "../store/secrets.js";
import type { AgentRow, Store, TurnRow } from "../store/store.js";

/** What the HTTP layer needs from the daemon; the CLI reaches all of it through HTTP. */
export interface ApiServices {
  org: string;
  store: Store;
  secrets: SecretStore;
  runtime: Runtime;
  bus: EventBus;
  /** Set when config.yaml has a slack: section. */
  slack?: SlackService | undefined;
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
  /** Live text deltas of model replies (not stored). Returns an unsubscribe function. */
  onDelta(agentId: string, listener: (run: string, text: string, reset?: boolean) => void): () => void;
}
