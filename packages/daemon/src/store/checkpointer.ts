import { Worker } from "node:worker_threads";

/**
 * Moves WAL checkpoints (the only step that fsyncs in WAL + synchronous=NORMAL)
 * off the main thread: a worker with its own connection checkpoints passively,
 * so commits on the event loop never wait on the disk.
 *
 * A passive checkpoint never waits, so under steady writes it never catches
 * the frames appended while it ran; SQLite starts the WAL over only when a
 * writer finds every frame checkpointed, so the WAL grew without end (630 MB
 * after 3,000 turns through the daemon). Once the WAL holds `restartFrames`
 * frames the worker checkpoints in RESTART mode: it waits for the writer's
 * current transaction, copies the few frames left while holding off the next
 * one, and the next commit writes the WAL from its start again (the main
 * connection's journal_size_limit then cuts the file back).
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
const Database = require(workerData.driver);
const db = new Database(workerData.path);
// Short: a RESTART holds the write lock while it waits, and the main thread's commits wait with it.
db.pragma("busy_timeout = 100");
const timer = setInterval(() => {
  try {
    const [done] = db.pragma("wal_checkpoint(PASSIVE)");
    if (done && done.log >= workerData.restartFrames) db.pragma("wal_checkpoint(RESTART)");
  } catch { /* a busy database is checkpointed next time */ }
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

/** 65,536 frames of 1 KiB pages: a WAL of about 64 MiB. */
export const DEFAULT_RESTART_FRAMES = 65_536;

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

  constructor(path: string, driver: string, everyMs = 500, restartFrames = DEFAULT_RESTART_FRAMES, onError?: (err: Error) => void) {
    this.starting = setTimeout(() => {
      const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { path, driver, everyMs, restartFrames } });
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
