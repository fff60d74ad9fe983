import { randomUUID } from "node:crypto";
import { mkdir, open, readFile, rename, rm, type FileHandle } from "node:fs/promises";
import { dirname, join, resolve } from "node:path";
import { MemoryFinishedCalls, type FinishedCallRecord, type FinishedCallStore } from "./finished-calls.js";
import { syncDir } from "./sync-dir.js";

export const DEFAULT_FINISHED_CALLS_FILE = join(".wardrik", "finished-calls.jsonl");

export interface FileFinishedCallsOptions {
  /** Calls kept at most; past it the oldest go first. Default 10,000. */
  maxCalls?: number;
  /** A call finished longer ago than this is forgotten. Default 24 hours. */
  maxAgeMs?: number;
}

interface Waiting {
  readonly line: string;
  resolve(): void;
  reject(err: unknown): void;
}

/**
 * Finished calls in an append-only JSON-lines file, one call a line, each
 * write synced to disk before the call's result leaves the worker; calls
 * that finish together share one write and one sync. When the file holds
 * twice as many lines as calls are kept, it is rewritten with the live ones
 * (a temporary file, synced and renamed into place). A torn last line (the
 * process died mid-write, before that result was sent) is skipped on load.
 *
 * One worker process at a time may use a file: a restarted process takes it
 * over; two processes that run at once need a file each.
 */
export class FileFinishedCalls implements FinishedCallStore {
  readonly file: string;
  private readonly maxCalls: number;
  private readonly memory: MemoryFinishedCalls;
  private opened: Promise<void> | undefined;
  private loaded = false;
  private handle: FileHandle | undefined;
  private lines = 0;
  private queue: Waiting[] = [];
  private writing: Promise<void> | undefined;

  constructor(file: string = resolve(process.cwd(), DEFAULT_FINISHED_CALLS_FILE), options: FileFinishedCallsOptions = {}) {
    this.file = resolve(file);
    this.maxCalls = options.maxCalls ?? 10_000;
    this.memory = new MemoryFinishedCalls({ maxCalls: this.maxCalls, maxAgeMs: options.maxAgeMs ?? 24 * 3600_000, maxChars: Infinity });
  }

  open(): Promise<void> {
    this.opened ??= this.load();
    return this.opened;
  }

  get(key: string): FinishedCallRecord | undefined | Promise<FinishedCallRecord | undefined> {
    if (this.loaded) return this.memory.get(key);
    return this.open().then(() => this.memory.get(key));
  }

  async put(record: FinishedCallRecord): Promise<void> {
    await this.open();
    this.memory.put(record);
    const line = JSON.stringify(record) + "\n";
    await new Promise<void>((resolve, reject) => {
      this.queue.push({ line, resolve, reject });
      this.kick();
    });
  }

  async close(): Promise<void> {
    while (this.writing) await this.writing;
    const handle = this.handle;
    this.handle = undefined;
    await handle?.close();
  }

  private kick(): void {
    if (this.writing) return;
    this.writing = this.drain().finally(() => {
      this.writing = undefined;
      if (this.queue.length > 0) this.kick();
    });
  }

  /** Writes everything queued, one write and one sync per batch. */
  private async drain(): Promise<void> {
    while (this.queue.length > 0) {
      const batch = this.queue.splice(0);
      try {
        // The batch's records are in memory already: a rewrite carries them.
        if (this.lines + batch.length >= 2 * this.maxCalls) await this.rewrite();
        else {
          const handle = await this.appendHandle();
          await handle.write(batch.map((w) => w.line).join(""));
          await handle.datasync();
          this.lines += batch.length;
        }
        for (const w of batch) w.resolve();
      } catch (err) {
        for (const w of batch) w.reject(err);
      }
    }
  }

  private async appendHandle(): Promise<FileHandle> {
    if (!this.handle) {
      this.handle = await open(this.file, "a");
      // A new file must survive a crash too, not only its contents.
      await syncDir(dirname(this.file));
    }
    return this.handle;
  }

  /** Replaces the file with the calls still kept. */
  private async rewrite(): Promise<void> {
    const live = this.memory.records();
    const temp = `${this.file}.${process.pid}.${randomUUID()}.tmp`;
    const out = await open(temp, "w");
    try {
      await out.writeFile(live.map((r) => JSON.stringify(r) + "\n").join(""), "utf8");
      await out.sync();
    } finally {
      await out.close();
    }
    try {
      await rename(temp, this.file);
    } catch (err) {
      await rm(temp, { force: true });
      throw err;
    }
    await syncDir(dirname(this.file));
    const old = this.handle;
    this.handle = undefined;
    await old?.close();
    this.lines = live.length;
  }

  private async load(): Promise<void> {
    await mkdir(dirname(this.file), { recursive: true });
    let text = "";
    try {
      text = await readFile(this.file, "utf8");
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
    }
    let lines = 0;
    for (const line of text.split("\n")) {
      if (line.trim() === "") continue;
      lines++;
      const record = parseRecord(line);
      if (record) this.memory.put(record);
    }
    this.lines = lines;
    this.loaded = true;
    if (this.lines >= 2 * this.maxCalls) await this.rewrite();
  }
}

/** A line as a record; undefined for a torn or foreign line (nothing can be known of it). */
function parseRecord(line: string): FinishedCallRecord | undefined {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return undefined;
  }
  if (typeof value !== "object" || value === null) return undefined;
  const r = value as Partial<FinishedCallRecord>;
  if (typeof r.key !== "string" || typeof r.callId !== "string" || typeof r.result !== "string") return undefined;
  if (typeof r.attempt !== "number" || typeof r.at !== "number") return undefined;
  return { key: r.key, callId: r.callId, attempt: r.attempt, at: r.at, result: r.result };
}
