import type { KeyRing } from "../secrets/key-ring.js";
import type { Store } from "../store/store.js";
import type { ToolCallContext, ToolOutcome } from "../tools/toolset.js";
import { verifyRequest } from "./node-key.js";
import { unrecordedCall } from "./recorded-call.js";
import type { ForwardedCall } from "./remote-worker-calls.js";

/** What a node runs for another: a worker call its own workers serve (the routes are http/cluster-routes.ts). */
export interface ClusterCallHost {
  /** What is wrong with a request's signature (see node-key.ts), or undefined when another node sent it. */
  verify(header: string | undefined, method: string, path: string, body: string): string | undefined;
  /** Why the record does not show this call running under its decision, or undefined when it does. */
  unrecorded(call: ForwardedCall): Promise<string | undefined>;
  callLocal(tool: string, args: unknown, ctx: ToolCallContext): Promise<ToolOutcome>;
}

/** What this node does for the others: checks their signature and the record, then runs the call on its own workers. */
export function clusterCallHost(store: Store, keyRing: () => KeyRing, workers: Pick<ClusterCallHost, "callLocal">): ClusterCallHost {
  return {
    verify: (header, method, path, body) => verifyRequest(keyRing(), header, method, path, body),
    unrecorded: (call) => unrecordedCall(store, call),
    callLocal: (tool, args, ctx) => workers.callLocal(tool, args, ctx),
  };
}
