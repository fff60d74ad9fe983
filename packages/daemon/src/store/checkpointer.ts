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

/**
 * The worker starts one interval after the database opens, not during the
 * open: its thread (a Node environment and a second SQLite connection) costs
 * about 30 ms of CPU that a daemon's start, on a small machine, would share.
 * The first checkpoint was due only after that interval anyway.
 */
export class Checkpointer {
  private worker: Worker | undefined;
  private readonly starting: NodeJS.Timeout;
  private exited = false;
  /** Why the worker stopped early, if it did; checkpoints then fall back to SQLite's automatic ones. */
  error: Error | undefined;

  constructor(path: string, driver: string, everyMs = 500, onError?: (err: Error) => void) {
    this.starting = setTimeout(() => {
      const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { path, driver, everyMs } });
      this.worker = worker;
      worker.unref();
      worker.on("error", (err) => {
        this.error = err;
        onError?.(err);
      });
      worker.on("exit", () => (this.exited = true));
    }, everyMs).unref();
  }

  close(): Promise<void> {
    clearTimeout(this.starting);
    const worker = this.worker;
    if (!worker || this.exited) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(() => void worker.terminate().then(() => resolve()), 2000);
      worker.once("exit", () => {
        clearTimeout(timer);
        resolve();
      });
      worker.postMessage("close");
    });
  }
}
