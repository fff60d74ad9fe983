/**
 * One turn's reply in its Slack thread: posted when the first text arrives,
 * then updated as the model streams, at most once per interval (a second),
 * and finally given the turn's reply. Requests go one at a time and the
 * interval runs from the end of one to the start of the next, so Slack never
 * sees two updates of a message closer than the interval. The first post and
 * the last word are claimed in the database, so in a cluster (or against a
 * sweep finishing a reply whose node died) each happens once.
 */
import { postOnce, type PostOnceDeps } from "./post-once.js";
import type { SlackThread } from "./slack-thread.js";

/** Slack takes up to 40,000 characters of message text. */
const MAX_TEXT = 39_000;

export interface ReplyStreamDeps extends PostOnceDeps {
  minIntervalMs: number;
}

export class ReplyStream {
  private latest = "";
  private sent: string | undefined;
  private final = false;
  private finalSent = false;
  private busy = false;
  private closed = false;
  private timer: NodeJS.Timeout | undefined;
  private lastDoneAt = Number.NEGATIVE_INFINITY;
  private ts: string | undefined;
  private resolveDone: () => void = () => undefined;
  /** Settles once the final text was sent (or could not be). */
  readonly done = new Promise<void>((resolve) => (this.resolveDone = resolve));

  constructor(
    readonly run: string,
    readonly thread: SlackThread,
    private readonly deps: ReplyStreamDeps,
  ) {}

  /** The text so far (streamed). */
  show(text: string): void {
    if (this.final) return;
    this.latest = text;
    this.pump();
  }

  /** The turn's last word. */
  finish(text: string): void {
    this.latest = text.trim() === "" ? "_(no text in the reply)_" : text;
    this.final = true;
    this.pump();
  }

  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
    this.resolveDone();
  }

  private pump(): void {
    if (this.busy || this.timer || this.closed) return;
    const pending = this.final ? !this.finalSent : this.latest.trim() !== "" && this.latest !== this.sent;
    if (!pending) return;
    const wait = this.lastDoneAt + this.deps.minIntervalMs - Date.now();
    if (wait > 0) {
      this.timer = setTimeout(() => {
        this.timer = undefined;
        this.pump();
      }, wait);
      return;
    }
    this.busy = true;
    const text = this.latest;
    const final = this.final;
    void this.send(text, final)
      // `final`: the turn's last word failed, so only a sweep posts the reply now.
      .catch((err: unknown) => this.deps.log("warn", "a reply could not be shown in Slack", { run: this.run, final, err: String(err) }))
      .finally(() => {
        this.busy = false;
        this.lastDoneAt = Date.now();
        this.sent = text;
        if (final) {
          this.finalSent = true;
          this.resolveDone();
        }
        this.pump();
      });
  }

  private async send(text: string, final: boolean): Promise<void> {
    const { api, table, now, node } = this.deps;
    const shown = text.length > MAX_TEXT ? `${text.slice(0, MAX_TEXT)}\n… (the reply is longer; see the agent's events)` : text;
    // A turn that resumed after a restart (or on another node) updates the message posted before.
    this.ts ??= (await table.message("reply", this.run))?.ts ?? undefined;
    if (this.ts === undefined) {
      const message = {
        kind: "reply" as const,
        ref: this.run,
        channel: this.thread.channel,
        threadTs: this.thread.threadTs,
        state: "streaming",
      };
      // Another node is posting it (it drove the turn until a moment ago): a later update finds its ts.
      const post = await postOnce(this.deps, message, shown);
      if (!post) return;
      this.ts = post.ts;
      // Posted by a request whose answer was lost: Slack shows that request's text, so the message is updated below.
      if (!post.found) {
        if (final) await table.setState("reply", this.run, "final", now());
        return;
      }
    }
    if (!final) return api.update(this.thread.channel, this.ts, shown);
    // The last word, once: the sweep of another node may have given it already.
    if (!(await table.claimUpdate("reply", this.run, "streaming", node, now()))) return;
    try {
      await api.update(this.thread.channel, this.ts, shown);
    } catch (err) {
      await table.dropClaim("reply", this.run, node);
      throw err;
    }
    await table.setState("reply", this.run, "final", now());
  }
}
