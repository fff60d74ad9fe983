/** How long one piece of work may hold the event loop before it lets other work (other orgs' requests) run. */
const SLICE_MS = 8;

/**
 * Reading a stream whose chunks are already buffered never leaves the
 * microtask queue: a reply that arrived faster than it is parsed (200,000
 * characters in small chunks) kept the daemon from answering anything else
 * for seconds. Every SLICE_MS of such work the reader waits for the event
 * loop's next turn (setImmediate: after pending I/O), so the work is the same
 * but comes in slices, with everyone else's requests between them.
 */
export class TimeSlices {
  private since = performance.now();

  constructor(private readonly sliceMs = SLICE_MS) {}

  async yieldIfDue(): Promise<void> {
    if (performance.now() - this.since < this.sliceMs) return;
    await nextLoopTurn();
    this.since = performance.now();
  }
}

/** Waits for the event loop's next turn (after pending I/O): what one large piece of work does between its pieces. */
export function nextLoopTurn(): Promise<void> {
  return new Promise<void>((resolve) => setImmediate(resolve));
}
