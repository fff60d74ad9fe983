import { CallStop, type CallStopWatch } from "./toolset.js";

/**
 * One call's stop, as the runtime hands it to a toolset: `abort` stops it
 * (a kill, the timeout, its turn ending), `onStop` tells listeners, and
 * `signal` is an AbortSignal for toolsets that pass one on (MCP, fetch).
 *
 * The signal is made only when read: Node 20 spends several microseconds
 * and a good deal of garbage making each AbortSignal, and the worker
 * gateway, which carries most calls, listens with `onStop` instead. A signal
 * read after the stop is made already aborted with its reason.
 */
export class CallStopper implements CallStopWatch {
  private why: CallStop | undefined;
  private controller: AbortController | undefined;
  private listeners: (() => void)[] = [];

  get reason(): CallStop | undefined {
    return this.why;
  }

  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.why) this.controller.abort(this.why);
    }
    return this.controller.signal;
  }

  /** Stops the call; the first reason holds, as an AbortController's does. */
  abort(reason: CallStop): void {
    if (this.why) return;
    this.why = reason;
    this.controller?.abort(reason);
    const listeners = this.listeners;
    this.listeners = [];
    for (const listener of listeners) listener();
  }

  onStop(listener: () => void): () => void {
    if (this.why) {
      queueMicrotask(listener);
      return () => {};
    }
    this.listeners.push(listener);
    return () => {
      const i = this.listeners.indexOf(listener);
      if (i >= 0) this.listeners.splice(i, 1);
    };
  }
}

const SIGNAL_OF_STOP: PropertyDescriptor = {
  get(this: { stop: CallStopper }): AbortSignal {
    return this.stop.signal;
  },
  enumerable: true,
  configurable: true,
};

/**
 * A call's context whose `signal` is its stop's (made only when read), as an
 * own enumerable property like any other. One getter shared by every call: a
 * getter written in an object literal is a new function each time, and V8
 * then gives each context a hidden class of its own, about 800 bytes more a
 * call for the collector.
 */
export function withStopSignal<T extends { stop: CallStopper }>(ctx: T): T & { signal: AbortSignal } {
  return Object.defineProperty(ctx, "signal", SIGNAL_OF_STOP) as T & { signal: AbortSignal };
}

/** The stop of a call as a toolset sees it: the runtime's watch, or one over the signal of a caller that gave only that. */
export function stopWatchOf(ctx: { signal: AbortSignal; stop?: CallStopWatch | undefined }): CallStopWatch {
  if (ctx.stop) return ctx.stop;
  const signal = ctx.signal;
  return {
    get reason() {
      if (!signal.aborted) return undefined;
      const r: unknown = signal.reason;
      return r instanceof CallStop ? r : new CallStop("killed");
    },
    onStop(listener) {
      if (signal.aborted) {
        queueMicrotask(listener);
        return () => {};
      }
      signal.addEventListener("abort", listener, { once: true });
      return () => signal.removeEventListener("abort", listener);
    },
  };
}
