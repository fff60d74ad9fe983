import type { Logger } from "./log/logger.js";
import type { NodeOwnership } from "./cluster/node-ownership.js";
import type { Runtime } from "./runtime/runtime.js";
import type { SecretRedactor } from "./secrets/redactor.js";
import type { Store } from "./store/store.js";
import { redactOutcome } from "./tools/redacting-toolset.js";
import { WorkerGateway } from "./tools/workers/worker-gateway.js";
import { WorkerNotes } from "./worker-notes.js";

/**
 * The daemon's worker gateway, tied to the rest of the daemon: tokens from
 * the store; the worker each call leaves for noted in the record (a person
 * asked about a lost answer learns where it ran); answers nobody here waits
 * for handed to the runtime, which exists only after the gateway
 * (`attach`). `limits`: config.yaml `worker_grace` and `limits.json_depth`.
 */
export function daemonWorkers(
  deps: { store: Store; node: NodeOwnership; redactor: SecretRedactor; log: Logger },
  limits: { workerGraceMs: number; maxJsonDepth: number },
): { workers: WorkerGateway; attach(runtime: Runtime): void } {
  const { store, node, redactor, log } = deps;
  let runtime: Runtime | undefined;
  const notes = new WorkerNotes((due) => store.calls.sentTo(due), log);
  const workers = new WorkerGateway({
    authenticate: (t) => store.tokens.authenticate(t),
    log,
    reconnectGraceMs: limits.workerGraceMs,
    maxJsonDepth: limits.maxJsonDepth,
    ...(node.remoteWorkers ? { remote: node.remoteWorkers } : {}),
    onDispatched: (_org, callId, worker, answered) => {
      // Not worth holding the call for: a crash before this write only leaves the prompt without the worker's name.
      notes.note(callId, JSON.stringify(node.clustered ? { ...worker, node: node.node } : worker), answered);
    },
    onLateAnswer: (org, { callId, attempt, outcome }) => {
      // Not through the registry: blanked here, like every other tool outcome.
      runtime?.acceptLateAnswer(org, { callId, attempt, outcome: redactOutcome(outcome, redactor.forOrg(org)) }).then(
        (taken) => log(taken ? "info" : "debug", taken ? "a late answer completed its call" : "late answer dropped", { callId, attempt }),
        (err: unknown) => log("error", "a late answer could not be stored", { callId, err: String(err) }),
      );
    },
  });
  return { workers, attach: (rt) => (runtime = rt) };
}
