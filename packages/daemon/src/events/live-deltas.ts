import type { ModelRetry } from "@wardrik/protocol";
import type { SecretRedactor, StreamRedactor } from "../secrets/redactor.js";

export type DeltaListener = (run: string, text: string, reset?: boolean, retry?: ModelRetry) => void;

/**
 * The live text of model replies, on its way to whoever follows an agent
 * (SSE streams, a Slack thread). It is not stored, but it leaves the daemon,
 * so it is redacted as it streams: a value the model writes in several
 * deltas is found too. Text that could be the start of a value is held back
 * until the next delta or the end of the model call rules it in or out, so
 * the deltas a client joins add up to the stored reply, redacted.
 */
export class LiveDeltas {
  private readonly listeners = new Map<string, Set<DeltaListener>>();
  /** One stream per turn whose model call is streaming now. */
  private readonly streams = new Map<string, StreamRedactor>();

  /** `also`: a sink for every delta of every agent (Slack). */
  constructor(
    private readonly redactor: SecretRedactor,
    private readonly also: (run: string, text: string, reset?: boolean) => void = () => undefined,
  ) {}

  /** A delta from the runtime; `reset`: the call is retried, and what it streamed (or held back) is void. */
  delta(agent: { id: string; org: string }, run: string, text: string, reset?: boolean, retry?: ModelRetry): void {
    // The agent's org's values, as its events have them.
    const redactor = this.redactor.forOrg(agent.org);
    if (reset) {
      this.streams.delete(run);
      // A provider's error text can quote a key: it reaches followers redacted.
      const said = retry ? { ...retry, error: redactor.redact(retry.error) } : undefined;
      this.send(agent.id, run, "", true, said);
      return;
    }
    let stream = this.streams.get(run);
    if (!stream) this.streams.set(run, (stream = redactor.stream({ keepPartials: true })));
    const out = stream.push(text);
    if (out !== "") this.send(agent.id, run, out);
  }

  /** The model call ended: what was held back goes out (`ok`), or is dropped with a failed call. */
  end(agentId: string, run: string, ok: boolean): void {
    const stream = this.streams.get(run);
    this.streams.delete(run);
    const rest = ok && stream ? stream.flush() : "";
    if (rest !== "") this.send(agentId, run, rest);
  }

  /** Follows one agent's deltas; returns the unsubscribe function. */
  subscribe(agentId: string, listener: DeltaListener): () => void {
    let set = this.listeners.get(agentId);
    if (!set) this.listeners.set(agentId, (set = new Set()));
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0) this.listeners.delete(agentId);
    };
  }

  private send(agentId: string, run: string, text: string, reset?: boolean, retry?: ModelRetry): void {
    const set = this.listeners.get(agentId);
    if (set) for (const l of set) l(run, text, reset, retry);
    this.also(run, text, reset);
  }
}
