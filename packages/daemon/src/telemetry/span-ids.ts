/**
 * IDs of the child spans a process records (model calls, tool calls): a
 * random prefix and a counter, instead of a random draw and a hex encoding
 * for every span (bench/telemetry.ts).
 *
 * A span ID need only be unique within its trace, but a turn's trace can be
 * written by several processes: the daemon that started the turn, a restarted
 * one that resumed it, another cluster node that took it over. Each process
 * draws its own prefix, so two IDs can only meet when two prefixes do: one
 * chance in 2^48 for two processes, about the chance of two random span IDs
 * meeting in a trace of a few hundred spans. The counter has the other 16
 * bits; after 65,535 IDs a new prefix is drawn, so a daemon that runs for
 * months does not start its IDs over.
 * The counter starts at 1, so no ID is all zeros (invalid in W3C trace
 * context), whatever the prefix.
 */
import { RandomIdGenerator } from "@opentelemetry/sdk-trace-base";

const PREFIX_HEX = 12;
const COUNTER_HEX = 16 - PREFIX_HEX;
const LAST = 16 ** COUNTER_HEX - 1;

export class SpanIds {
  private prefix = "";
  private n = LAST;

  constructor(private readonly random: { generateSpanId(): string } = new RandomIdGenerator()) {}

  /** A 16-hex-digit span ID this generator has not returned before. */
  next(): string {
    if (this.n === LAST) {
      this.prefix = this.random.generateSpanId().slice(0, PREFIX_HEX);
      this.n = 0;
    }
    this.n++;
    return this.prefix + this.n.toString(16).padStart(COUNTER_HEX, "0");
  }
}
