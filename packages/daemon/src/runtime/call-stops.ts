import { CallStop } from "../tools/toolset.js";

/** What stops one running call: a CallStopper, or an AbortController while its workers are asked about it. */
interface CallStopHandle {
  abort(reason: CallStop): void;
}

/**
 * The calls an awake agent is running, and kills that arrived before their
 * call was dispatched (the call committed as running, its dispatch not yet
 * begun). Owned by the agent's driver; the call runners register a call
 * while it runs, and the kill paths (a person, another node, a late answer)
 * stop it through here.
 */
export class CallStops {
  private readonly running = new Map<string, CallStopHandle>();
  private readonly held = new Set<string>();

  get size(): number {
    return this.running.size;
  }

  has(callId: string): boolean {
    return this.running.has(callId);
  }

  /**
   * The call runs under `handle` until the returned function is called; a
   * kill held for it stops it at once.
   */
  track(callId: string, handle: CallStopHandle): () => void {
    this.running.set(callId, handle);
    if (this.held.delete(callId)) handle.abort(new CallStop("killed"));
    return () => {
      if (this.running.get(callId) === handle) this.running.delete(callId);
    };
  }

  /** Stops the call if it runs here (and forgets a kill held for it); false when it does not run here. */
  kill(callId: string): boolean {
    const handle = this.running.get(callId);
    if (!handle) return false;
    this.held.delete(callId);
    handle.abort(new CallStop("killed"));
    return true;
  }

  /** Stops the call if it runs; otherwise its dispatch, when it comes, stops it at once. */
  killNowOrAtDispatch(callId: string): void {
    if (!this.kill(callId)) this.held.add(callId);
  }

  /** Its dispatch, when it comes, stops the call at once. */
  holdKill(callId: string): void {
    this.held.add(callId);
  }

  /** A held kill that no longer applies (the call was not found, or ended otherwise). */
  dropKill(callId: string): void {
    this.held.delete(callId);
  }
}
