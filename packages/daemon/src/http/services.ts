import type {
  AgentDetail,
  AgentTools,
  DeliveryPage,
  DeliveryStatus,
  DeliveryView,
  HookAccepted,
  ModelRetry,
  ReloadResult,
  ReplayReport,
  TurnView,
} from "@wardrik/protocol";
import type { ClusterCallHost } from "../cluster/cluster-call-host.js";
import type { EventBus } from "../events/event-bus.js";
import type { McpServers } from "../tools/mcp/mcp-servers.js";
import type { Runtime } from "../runtime/runtime.js";
import type { SlackService } from "../slack/slack-service.js";
import type { SecretStore } from "../store/secrets.js";
import type { AgentRow, Store, TurnRow } from "../store/store.js";
import type { ReplayInput } from "../replay/run-replay.js";

/** Webhook deliveries (the outbox) and inbound webhooks (triggers). */
export interface EventsIOServices {
  deliveries: {
    list(org: string, query: { status?: DeliveryStatus | undefined; limit: number; cursor?: string | undefined }): Promise<DeliveryPage>;
    get(org: string, id: string): Promise<DeliveryView>;
    retry(org: string, id: string): Promise<DeliveryView>;
  };
  acceptWebhook(req: {
    org: string;
    name: string;
    header(name: string): string | undefined;
    body: string;
    /** The body parsed within the limits; the signature is checked before it is called. */
    json(): unknown;
  }): Promise<HookAccepted>;
}

/** What the HTTP layer needs from the daemon; the CLI reaches all of it through HTTP. */
export interface ApiServices {
  /** Set in a cluster: what other nodes may ask of this one (a call for a worker connected here). */
  cluster?: ClusterCallHost;
  org: string;
  /** How long a node may stay silent before it counts as gone (the cluster lease). */
  leaseMs: number;
  store: Store;
  secrets: SecretStore;
  runtime: Runtime;
  bus: EventBus;
  events: EventsIOServices;
  /** Set when config.yaml has a slack: section. */
  slack?: SlackService | undefined;
  /** Rereads agents/ (and scripts/); `warnings`: tool patterns of the loaded agents that match nothing. */
  reload(): Promise<ReloadResult>;
  describeAgent(row: AgentRow): Promise<AgentDetail>;
  describeTools(row: AgentRow): Promise<AgentTools>;
  describeTurn(turn: TurnRow): Promise<TurnView>;
  /** Runs turns again in a scratch copy of the agent, tools answered from the record (replay/run-replay.ts). */
  replay(row: AgentRow, input: ReplayInput): Promise<ReplayReport>;
  /** The MCP servers of config.yaml and their OAuth logins. */
  mcp: McpServers;
  /** Live text deltas of model replies (not stored). Returns an unsubscribe function. */
  onDelta(agentId: string, listener: (run: string, text: string, reset?: boolean, retry?: ModelRetry) => void): () => void;
}
