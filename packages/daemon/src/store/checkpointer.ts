import { Worker } from "node:worker_threads";

/**
 * Moves WAL checkpoints (the only step that fsyncs in WAL + synchronous=NORMAL)
 * off the main thread: a worker with its own connection checkpoints passively,
 * so commits on the event loop never wait on the disk.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
const Database = require(workerData.driver);
const db = new Database(workerData.path);
db.pragma("busy_timeout = 1000");
const timer = setInterval(() => {
  try { db.pragma("wal_checkpoint(PASSIVE)"); } catch { /* a busy database is checkpointed next time */ }
}, workerData.everyMs);
parentPort.on("message", (m) => {
  if (m === "close") {
    clearInterval(timer);
    try { db.pragma("wal_checkpoint(PASSIVE)"); } catch {}
    db.close();
    parentPort.close();
  }
});
`;

export class Checkpointer {
  private readonly worker: Worker;
  private exited = false;
  /** Why the worker stopped early, if it did; checkpoints then fall back to SQLite's automatic ones. */
  error: Error | undefined;

  constructor(path: string, driver: string, everyMs = 500, onError?: (err: Error) => void) {
    this.worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { path, driver, everyMs } });
    this.worker.unref();
    this.worker.on("error", (err) => {
      this.error = err;
      onError?.(err);
    });
    this.worker.on("exit", () => (this.exited = true));
  }

  close(): Promise<void> {
    if (this.exited) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(() => void this.worker.terminate().then(() => resolve()), 2000);
      this.worker.once("exit", () => {
        clearTimeout(timer);
        resolve();
      });
      this.worker.postMessage("close");
    });
  }
}
