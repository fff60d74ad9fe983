import type pg from "pg";
import { loadPg } from "./load-pg.js";

export type StoreLog = (level: "warn", msg: string, fields?: Record<string, unknown>) => void;

/** Stops one subscription; the channel is unlistened when its last subscriber goes. */
export type Unsubscribe = () => Promise<void>;

export interface ListenOptions {
  /**
   * Called after the LISTEN connection was lost and is back. Notifications
   * sent in between are gone (PostgreSQL does not queue them for a
   * disconnected session), so a subscriber re-reads whatever it watches.
   */
  onReconnect?: () => void;
}

interface Subscriber {
  onPayload: (payload: string) => void;
  onReconnect: (() => void) | undefined;
}

const RETRY_MIN_MS = 100;
const RETRY_MAX_MS = 5000;

/**
 * LISTEN for a PostgresDb: one dedicated session (not a pool client, which
 * would be handed to others between queries), shared by every channel, and
 * re-established with backoff when the connection drops.
 */
export class PostgresListener {
  private client: pg.Client | undefined;
  private connecting: Promise<pg.Client> | undefined;
  private readonly subscribers = new Map<string, Set<Subscriber>>();
  private retryTimer: NodeJS.Timeout | undefined;
  private retryMs = RETRY_MIN_MS;
  private closed = false;

  constructor(
    private readonly config: pg.ClientConfig,
    private readonly log: StoreLog,
  ) {}

  /** Resolves once the server listens on `channel` for this session: later NOTIFYs reach `onPayload`. */
  async listen(channel: string, onPayload: (payload: string) => void, options: ListenOptions = {}): Promise<Unsubscribe> {
    if (this.closed) throw new Error("The database is closed: cannot LISTEN.");
    const sub: Subscriber = { onPayload, onReconnect: options.onReconnect };
    let set = this.subscribers.get(channel);
    if (!set) this.subscribers.set(channel, (set = new Set()));
    set.add(sub);
    try {
      const client = await this.connection();
      await client.query(`LISTEN ${loadPg().escapeIdentifier(channel)}`);
    } catch (err) {
      this.remove(channel, sub);
      throw err;
    }
    let done = false;
    return async () => {
      if (done) return;
      done = true;
      // Decided and queued synchronously, so a concurrent listen() on the channel queues its LISTEN after this UNLISTEN.
      if (this.remove(channel, sub) && this.client)
        await this.client.query(`UNLISTEN ${loadPg().escapeIdentifier(channel)}`).catch(() => undefined);
    };
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retryTimer);
    this.subscribers.clear();
    await this.connecting?.catch(() => undefined);
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => undefined);
  }

  /** Removes a subscriber; true when it was the channel's last. */
  private remove(channel: string, sub: Subscriber): boolean {
    const set = this.subscribers.get(channel);
    if (!set?.delete(sub) || set.size > 0) return false;
    this.subscribers.delete(channel);
    return true;
  }

  private connection(): Promise<pg.Client> {
    if (this.client) return Promise.resolve(this.client);
    this.connecting ??= this.connect().finally(() => (this.connecting = undefined));
    return this.connecting;
  }

  private async connect(): Promise<pg.Client> {
    const client = new (loadPg().Client)(this.config);
    client.on("notification", (msg) => this.deliver(msg.channel, msg.payload ?? ""));
    // Without an 'error' listener a dropped connection would crash the process.
    client.on("error", (err) => this.lost(client, err));
    client.on("end", () => this.lost(client));
    try {
      await client.connect();
      for (const channel of this.subscribers.keys()) await client.query(`LISTEN ${loadPg().escapeIdentifier(channel)}`);
    } catch (err) {
      await client.end().catch(() => undefined);
      throw err;
    }
    if (this.closed) {
      await client.end().catch(() => undefined);
      throw new Error("The database is closed: cannot LISTEN.");
    }
    this.client = client;
    return client;
  }

  private deliver(channel: string, payload: string): void {
    for (const sub of this.subscribers.get(channel) ?? []) {
      try {
        sub.onPayload(payload);
      } catch (err) {
        this.log("warn", "A LISTEN subscriber threw; the others still get the notification", { channel, error: String(err) });
      }
    }
  }

  private lost(client: pg.Client, err?: Error): void {
    if (client !== this.client) return;
    this.client = undefined;
    client.removeAllListeners("notification");
    void client.end().catch(() => undefined);
    // Nobody listens: the next listen() connects afresh.
    if (this.closed || this.subscribers.size === 0) return;
    this.log("warn", "The PostgreSQL LISTEN connection was lost; reconnecting", { error: err?.message ?? "connection ended" });
    this.reconnectLater();
  }

  private reconnectLater(): void {
    if (this.retryTimer || this.closed) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      if (this.closed) return;
      this.connection().then(
        () => {
          this.retryMs = RETRY_MIN_MS;
          for (const set of this.subscribers.values()) for (const sub of set) sub.onReconnect?.();
        },
        (e: unknown) => {
          this.retryMs = Math.min(RETRY_MAX_MS, this.retryMs * 2);
          this.log("warn", "Could not reconnect the PostgreSQL LISTEN connection; retrying", {
            error: e instanceof Error ? e.message : String(e),
            retryInMs: this.retryMs,
          });
          this.reconnectLater();
        },
      );
    }, this.retryMs);
    this.retryTimer.unref();
  }
}
