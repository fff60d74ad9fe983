/**
 * The last few kilobytes a server wrote to stderr, kept so that a failure
 * message can say what the server said before it died. Bounded: a chatty
 * server cannot grow the daemon's memory.
 */
export class StderrTail {
  private text = "";

  constructor(private readonly maxChars = 16_384) {}

  push(chunk: string): void {
    this.text += chunk;
    // Trim in bulk rather than per chunk, so a chatty server costs little.
    if (this.text.length > this.maxChars * 2) this.text = this.text.slice(-this.maxChars);
  }

  /** The last `lines` non-empty lines, at most `chars` characters; "" when the server wrote nothing. */
  tail(lines = 10, chars = 1_000): string {
    const kept = this.text
      .slice(-this.maxChars)
      .split(/\r?\n/)
      .filter((l) => l.trim() !== "")
      .slice(-lines)
      .join("\n");
    return kept.length > chars ? "…" + kept.slice(-chars) : kept;
  }

  clear(): void {
    this.text = "";
  }
}
