/**
 * A part of the daemon with a life of its own: `start` when the daemon starts,
 * `stop` when it stops. Either may be left out (a part built ready to use has
 * nothing to start; one that holds nothing has nothing to stop).
 */
export interface Service {
  readonly name: string;
  start?(): Promise<void> | void;
  stop?(): Promise<void> | void;
}

/** Services that started, stopped together (once, however often `stop` is called). */
export interface RunningServices {
  stop(): Promise<void>;
}

export interface ServiceListHooks {
  /** A service stopped (also one whose stop failed). */
  stopped?(name: string): void;
  /** A service's stop failed: the ones after it in the stop order still stop. */
  stopFailed?(name: string, err: unknown): void;
}

/**
 * Starts the services one after the other, in the list's order; stopping
 * goes the other way, so a service stops while everything it was started
 * after still runs. When one fails to start, those already started stop (in
 * reverse) before the failure is thrown.
 */
export async function startServices(services: readonly Service[], hooks: ServiceListHooks = {}): Promise<RunningServices> {
  const started: Service[] = [];
  const stopStarted = async () => {
    for (const service of [...started].reverse()) {
      try {
        await service.stop?.();
      } catch (err) {
        hooks.stopFailed?.(service.name, err);
      }
      hooks.stopped?.(service.name);
    }
  };
  for (const service of services) {
    try {
      await service.start?.();
    } catch (err) {
      // The failing one may have taken something before it threw: it stops too, first.
      started.push(service);
      await stopStarted();
      throw err;
    }
    started.push(service);
  }
  let stopping: Promise<void> | undefined;
  return { stop: () => (stopping ??= stopStarted()) };
}
