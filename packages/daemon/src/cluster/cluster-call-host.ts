import type { KeyRing } from "../secrets/key-ring.js";
import type { Store } from "../store/store.js";
import type { RecallAnswer, RecallQuestion, ToolCallContext, ToolOutcome } from "../tools/toolset.js";
import { verifyRequest } from "./node-key.js";
import { unrecordedCall, unrecordedRecall } from "./recorded-call.js";
import type { ForwardedCall, ForwardedRecall } from "./remote-worker-calls.js";

/** What a node does for another: a worker call its own workers serve, or a question to them (the routes are http/cluster-routes.ts). */
export interface ClusterCallHost {
  /** What is wrong with a request's signature (see node-key.ts), or undefined when another node sent it. */
  verify(header: string | undefined, method: string, path: string, body: string): string | undefined;
  /** Why the record does not show this call running under its decision, or undefined when it does. */
  unrecorded(call: ForwardedCall): Promise<string | undefined>;
  callLocal(tool: string, args: unknown, ctx: ToolCallContext): Promise<ToolOutcome>;
  /** Why the record holds no such call of that org with that key, or undefined when it does. */
  unrecordedRecall(recall: ForwardedRecall): Promise<string | undefined>;
  /** Asks the workers connected here whether they know a call. */
  recallHere(org: string, question: RecallQuestion): Promise<RecallAnswer>;
}

/** What this node does for the others: checks their signature and the record, then runs the call on (or asks) its own workers. */
export function clusterCallHost(
  store: Store,
  keyRing: () => KeyRing,
  workers: Pick<ClusterCallHost, "callLocal" | "recallHere">,
): ClusterCallHost {
  return {
    verify: (header, method, path, body) => verifyRequest(keyRing(), header, method, path, body),
    unrecorded: (call) => unrecordedCall(store, call),
    callLocal: (tool, args, ctx) => workers.callLocal(tool, args, ctx),
    unrecordedRecall: (recall) => unrecordedRecall(store, recall),
    recallHere: (org, question) => workers.recallHere(org, question),
  };
}
