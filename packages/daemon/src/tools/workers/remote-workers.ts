import type { WorkerToolDescriptor } from "@wardrik/protocol";
import type { RecallAnswer, RecallQuestion, ToolCallContext, ToolOutcome } from "../toolset.js";

/**
 * Workers connected to other nodes of a cluster. A node with no worker of a
 * tool sends the call to a node that has one; each node publishes what its
 * own workers serve.
 */
export interface RemoteWorkers {
  /** Tools the workers of other live nodes serve for `org`. */
  tools(org: string): { name: string; descriptor: WorkerToolDescriptor }[];
  /** Per other live node: the names of the tools its workers serve for `org` (for `wardrik agent show`). */
  nodes(org: string): { node: string; tools: string[] }[];
  /**
   * Runs the call on a worker of another node. Undefined when no other node
   * serves the tool, or none that does could be reached (so the call surely
   * never left this node).
   */
  call(org: string, tool: string, args: unknown, ctx: ToolCallContext): Promise<ToolOutcome | undefined>;
  /**
   * Asks the workers of the other live nodes whether they know a call (each
   * node asks its connected workers once, and waits for one that runs it).
   * Never throws: a node that cannot be reached knows nothing.
   */
  recall(org: string, question: RecallQuestion): Promise<RecallAnswer>;
  /** What this node's workers serve for `org` now (after a worker registered or left). */
  publish(org: string, tools: { name: string; descriptor: WorkerToolDescriptor }[]): void;
}
