import { SecretRedactor, type StreamRedactor } from "../../secrets/redactor.js";

/**
 * The last few kilobytes a server wrote to stderr, kept so that a failure
 * message can say what the server said before it died. Bounded: a chatty
 * server cannot grow the daemon's memory. Kept already redacted: a secret
 * the server writes in two pieces is still found (see StreamRedactor), and
 * cutting the tail can never leave part of one behind.
 */
export class StderrTail {
  private text = "";
  private readonly stream: StreamRedactor;

  constructor(
    private readonly maxChars = 16_384,
    redactor: SecretRedactor = new SecretRedactor(),
  ) {
    this.stream = redactor.stream();
  }

  /** Adds what the server wrote; returns the part that is safe to log now (redacted). */
  push(chunk: string): string {
    const released = this.stream.push(chunk);
    this.text += released;
    // Trim in bulk rather than per chunk, so a chatty server costs little.
    if (this.text.length > this.maxChars * 2) this.text = this.text.slice(-this.maxChars);
    return released;
  }

  /** The last `lines` non-empty lines, at most `chars` characters; "" when the server wrote nothing. */
  tail(lines = 10, chars = 1_000): string {
    const kept = (this.text + this.stream.peek())
      .slice(-this.maxChars)
      .split(/\r?\n/)
      .filter((l) => l.trim() !== "")
      .slice(-lines)
      .join("\n");
    return kept.length > chars ? "…" + kept.slice(-chars) : kept;
  }

  clear(): void {
    this.text = "";
    this.stream.flush();
  }
}
