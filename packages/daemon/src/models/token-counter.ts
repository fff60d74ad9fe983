import { createRequire } from "node:module";
import { Worker } from "node:worker_threads";
import { countExactly } from "./count-exactly.js";
import { estimateTokens } from "./estimate-tokens.js";

/**
 * Token counts for compaction decisions, without ever blocking the daemon's
 * only thread on a tokenizer.
 *
 * `countTokens` answers at once: the exact count when it is known, else a
 * linear estimate. Exact counts come from a BPE tokenizer (o200k) in a worker
 * thread, started by `loadTokenizer` when a conversation first gets near its
 * window (the tokenizer's tables cost tens of MB, which small agents never
 * need) and stopped again after a minute without work. Once it runs, every
 * text `countTokens` sees is sent to it, and later calls return its answer.
 */

/** How long `loadTokenizer` waits for counts in flight: a turn waits at most this, then goes on with estimates. */
const SETTLE_WAIT_MS = 1_500;
/** The worker stops after this long without a request, giving its memory back. */
const IDLE_STOP_MS = 60_000;
/** After the worker failed, estimates only for this long before trying again. */
const RETRY_AFTER_FAILURE_MS = 60_000;
/** Exact counts kept, by text: enough for the recent history of many conversations. */
const CACHE_ENTRIES = 4_096;
const CACHE_CHARS = 8 * 1024 * 1024;

const WORKER_SOURCE = `
const { parentPort, workerData } = require("node:worker_threads");
const { countTokens } = require(workerData.tokenizer);
const countExactly = ${countExactly.toString()};
parentPort.on("message", (m) => {
  let tokens;
  try { tokens = countExactly(m.text, countTokens); } catch { tokens = undefined; }
  parentPort.postMessage({ id: m.id, tokens });
});
parentPort.postMessage({ ready: true });
`;

interface Request {
  resolve: () => void;
  text: string;
}

class ExactCounter {
  private worker: Worker | undefined;
  private ready: Promise<boolean> | undefined;
  private failedAt = -Infinity;
  private nextId = 0;
  private readonly inFlight = new Map<number, Request>();
  /** Texts sent and not yet answered, with the promise that settles on the answer. */
  private readonly pending = new Map<string, Promise<void>>();
  private readonly known = new Map<string, number>();
  private knownChars = 0;
  private idleTimer: NodeJS.Timeout | undefined;

  exact(text: string): number | undefined {
    const n = this.known.get(text);
    if (n !== undefined) {
      // Most recently used last, so eviction drops the oldest.
      this.known.delete(text);
      this.known.set(text, n);
    }
    return n;
  }

  /** Sends `text` to the worker unless its count is known or on its way; only while the worker runs. */
  request(text: string): void {
    if (!this.worker || this.pending.has(text) || this.known.has(text)) return;
    const worker = this.worker;
    const id = this.nextId++;
    const settled = new Promise<void>((resolve) => this.inFlight.set(id, { resolve, text }));
    this.pending.set(text, settled);
    worker.postMessage({ id, text });
    this.touch();
  }

  /** Starts the worker if needed; resolves when it is ready and the counts asked for so far are in (or after `waitMs`). */
  async load(waitMs: number): Promise<void> {
    if (!this.worker && Date.now() - this.failedAt >= RETRY_AFTER_FAILURE_MS) this.start();
    const waiting = [this.ready ?? Promise.resolve(false), ...this.pending.values()];
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<void>((resolve) => (timer = setTimeout(resolve, waitMs)));
    await Promise.race([Promise.all(waiting), timeout]);
    clearTimeout(timer);
    this.touch();
  }

  async stop(): Promise<void> {
    const worker = this.worker;
    this.detach();
    if (worker) await worker.terminate();
  }

  private start(): void {
    const tokenizer = createRequire(import.meta.url).resolve("gpt-tokenizer");
    const worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { tokenizer } });
    worker.unref();
    this.worker = worker;
    this.ready = new Promise<boolean>((resolve) => {
      worker.on("message", (m: { ready?: boolean; id?: number; tokens?: number }) => {
        if (m.ready) return resolve(true);
        const req = this.inFlight.get(m.id!);
        if (!req) return;
        this.inFlight.delete(m.id!);
        this.pending.delete(req.text);
        if (typeof m.tokens === "number") this.remember(req.text, m.tokens);
        req.resolve();
      });
      worker.once("error", () => {
        this.failedAt = Date.now();
        resolve(false);
      });
      worker.once("exit", () => {
        if (this.worker === worker) this.detach();
        resolve(false);
      });
    });
    this.touch();
  }

  /** Forgets the worker; counts still in flight settle as unknown (their texts keep their estimates). */
  private detach(): void {
    clearTimeout(this.idleTimer);
    this.worker = undefined;
    this.ready = undefined;
    for (const req of this.inFlight.values()) req.resolve();
    this.inFlight.clear();
    this.pending.clear();
  }

  private touch(): void {
    clearTimeout(this.idleTimer);
    if (!this.worker) return;
    this.idleTimer = setTimeout(() => {
      if (this.inFlight.size === 0) void this.stop();
      else this.touch();
    }, IDLE_STOP_MS).unref();
  }

  private remember(text: string, tokens: number): void {
    this.known.set(text, tokens);
    this.knownChars += text.length;
    for (const [old] of this.known) {
      if (this.known.size <= CACHE_ENTRIES && this.knownChars <= CACHE_CHARS) break;
      this.known.delete(old);
      this.knownChars -= old.length;
    }
  }
}

const counter = new ExactCounter();

/**
 * Starts the tokenizer (in its worker thread) and waits, at most `waitMs`
 * (a turn's bound by default), for it to be ready and for the counts already
 * asked for. Tests that need the exact counts wait longer: on a busy machine
 * a large text takes more than a turn's bound to count.
 */
export function loadTokenizer(waitMs = SETTLE_WAIT_MS): Promise<void> {
  return counter.load(waitMs);
}

/** Tokens of a text: the exact count when known, else an estimate; never blocks on the tokenizer. */
export function countTokens(text: string): number {
  const exact = counter.exact(text);
  if (exact !== undefined) return exact;
  counter.request(text);
  return estimated(text);
}

/** Estimates of long texts, kept: a turn estimates the same message several times (prompt, compaction, split). */
const estimates = new Map<string, number>();
let estimatedChars = 0;
const ESTIMATE_CACHE_FROM = 16_384;
const ESTIMATE_CACHE_CHARS = 8 * 1024 * 1024;

function estimated(text: string): number {
  if (text.length < ESTIMATE_CACHE_FROM) return estimateTokens(text);
  let n = estimates.get(text);
  if (n === undefined) {
    n = estimateTokens(text);
    estimates.set(text, n);
    estimatedChars += text.length;
    // Oldest first out, until the texts kept fit the budget.
    for (const [old] of estimates) {
      if (estimatedChars <= ESTIMATE_CACHE_CHARS) break;
      estimates.delete(old);
      estimatedChars -= old.length;
    }
  }
  return n;
}

/** The exact count of a text if the tokenizer has given it, for callers that upgrade estimates later. */
export function exactTokens(text: string): number | undefined {
  return counter.exact(text);
}

/** Stops the tokenizer's worker thread (it also stops by itself when idle, and never keeps the process alive). */
export function stopTokenizer(): Promise<void> {
  return counter.stop();
}
