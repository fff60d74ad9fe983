import { UNNAMED } from "./needle-set.js";
import type { SecretRedactor } from "./redactor.js";

/** Shortest held-back text, at a stream's end, that is taken as the start of a secret rather than chance. */
const PARTIAL_MIN = 4;

/**
 * Redacts a stream chunk by chunk. Text that could be the start of a value
 * is held back until the next chunk completes or rules it out, so a value
 * written in any number of pieces is still found.
 */
export class StreamRedactor {
  private held = "";

  constructor(
    private readonly redactor: SecretRedactor,
    private readonly keepPartials = false,
  ) {}

  /** The text that is safe to pass on now, redacted. */
  push(chunk: string): string {
    let text = this.held + chunk;
    let blanked = "";
    if (!this.keepPartials && this.held.length >= PARTIAL_MIN && !this.redactor.startsValue(text)) {
      // The held text began a value, and the stream went on with something else: half a
      // secret is still a leak, so it is blanked like a whole one.
      blanked = UNNAMED;
      text = chunk;
    }
    const cut = this.redactor.safeCut(text);
    this.held = text.slice(cut);
    return blanked + this.redactor.redact(text.slice(0, cut));
  }

  /** What is held back, as it would be shown if the stream ended now (a long partial value is blanked). */
  peek(): string {
    const cut = this.redactor.safeCut(this.held);
    const partial = this.held.slice(cut);
    return this.redactor.redact(this.held.slice(0, cut)) + (partial.length >= PARTIAL_MIN && !this.keepPartials ? UNNAMED : partial);
  }

  /** Ends the stream: the held-back text, as `peek` shows it. */
  flush(): string {
    const rest = this.peek();
    this.held = "";
    return rest;
  }
}
