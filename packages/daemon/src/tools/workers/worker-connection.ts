import type { WebSocket } from "ws";
import type { DaemonMessage, WorkerErrorCode, WorkerToolDescriptor } from "@wardrik/protocol";
import { WORKER_CLOSE_CODES } from "@wardrik/protocol";
import type { WorkerRef } from "../toolset.js";

/** One connected worker process: its socket, its tools and the calls it is running. */
export class WorkerConnection {
  name = "";
  instance = "";
  sdk = "";
  greeted = false;
  /** The worker asked for no new calls (it is closing). */
  draining = false;
  /** Detached from routing: closed, failed or dropped. */
  gone = false;
  lastSeen = Date.now();
  tools = new Map<string, WorkerToolDescriptor>();
  /** Tools this worker registered that another worker serves with another definition; it serves them once that one is gone. */
  refused = new Map<string, WorkerToolDescriptor>();
  /** Calls dispatched to this worker and not yet answered. */
  inFlight = 0;
  /** Settles when the socket has closed. */
  readonly closed: Promise<void>;
  private queue: string[] = [];
  private flushScheduled = false;

  constructor(
    readonly id: string,
    readonly org: string,
    private readonly socket: WebSocket,
  ) {
    this.closed = new Promise((resolve) => socket.once("close", () => resolve()));
  }

  get available(): boolean {
    return this.greeted && !this.draining && !this.gone;
  }

  /**
   * Queues a message; everything queued in one turn of the event loop goes out
   * as one frame (a JSON array), which cuts syscalls and frames under load.
   */
  send(message: DaemonMessage): void {
    this.sendText(JSON.stringify(message));
  }

  /** Queues a message already written as JSON text (a call: see callText). */
  sendText(text: string): void {
    if (this.gone) return;
    this.queue.push(text);
    if (!this.flushScheduled) {
      this.flushScheduled = true;
      setImmediate(this.flush);
    }
  }

  private readonly flush = (): void => {
    this.flushScheduled = false;
    const queue = this.queue;
    if (queue.length === 0 || this.gone) return;
    this.queue = [];
    this.socket.send(queue.length === 1 ? queue[0]! : "[" + queue.join(",") + "]");
  };

  /** Tells the worker what it did wrong, then closes this connection only. */
  fail(code: WorkerErrorCode, message: string, closeCode: number = WORKER_CLOSE_CODES.policyViolation): void {
    this.flush();
    this.gone = true;
    this.queue = [];
    const frame: DaemonMessage = { type: "error", code, message };
    this.socket.send(JSON.stringify(frame));
    this.socket.close(closeCode, closeReason(message));
  }

  close(code: number, reason: string): void {
    this.flush();
    this.gone = true;
    this.socket.close(code, closeReason(reason));
  }

  terminate(): void {
    this.gone = true;
    this.queue = [];
    this.socket.terminate();
  }

  /** The worker process as the record names it. */
  ref(): WorkerRef {
    return { name: this.name, instance: this.instance };
  }

  describe(): Record<string, unknown> {
    return { worker: this.id, name: this.name, org: this.org };
  }
}

/** A close reason is limited to 123 bytes. */
function closeReason(message: string): string {
  const buf = Buffer.from(message);
  return buf.length <= 123
    ? message
    : buf
        .subarray(0, 120)
        .toString()
        .replace(/\uFFFD+$/, "") + "...";
}
