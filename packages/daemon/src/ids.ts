import { randomFillSync } from "node:crypto";
import { ID_PREFIXES, type IdKind } from "@wardrik/protocol";

/** Injected so tests can make IDs and time deterministic. */
export interface Clock {
  now(): Date;
}
export interface IdGenerator {
  next(kind: IdKind): string;
}

export const systemClock: Clock = { now: () => new Date() };

// Crockford's base32, as ULIDs spell it.
const ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";
const RANDOM_CHARS = 16;
const MAX_TIME = 0xffff_ffff_ffff;

/**
 * Monotonic ULIDs (48-bit millisecond time, 80 random bits, Crockford base32):
 * IDs made in the same millisecond, or while the clock stands behind the last
 * one, count up from the last random part, so IDs sort in the order they were
 * made. Written here rather than taken from the `ulid` package because a turn
 * makes a dozen IDs and that package builds each one a character at a time
 * and draws randomness per character: it showed in the turn benchmarks' CPU
 * and garbage. Randomness comes from a pooled buffer (one syscall per 4 KiB).
 */
export function ulidFactory(): (timeMs: number) => string {
  const pool = new Uint8Array(4096);
  let at = pool.length;
  const random = new Uint8Array(RANDOM_CHARS); // each 0..31
  let lastTime = -1;
  let timePart = "";
  return (timeMs) => {
    if (!Number.isInteger(timeMs) || timeMs < 0 || timeMs > MAX_TIME) throw new Error(`cannot make a ULID for time ${timeMs}`);
    if (timeMs > lastTime) {
      lastTime = timeMs;
      timePart = encodeTime(timeMs);
      if (at + RANDOM_CHARS > pool.length) {
        randomFillSync(pool);
        at = 0;
      }
      for (let i = 0; i < RANDOM_CHARS; i++) random[i] = pool[at++]! & 31;
    } else if (!increment(random)) {
      throw new Error("ULID random part overflowed within one millisecond");
    }
    let out = timePart;
    for (let i = 0; i < RANDOM_CHARS; i++) out += ALPHABET[random[i]!]!;
    return out;
  };
}

/** A ULID's time part (its first 10 characters): every ULID made before `ms` sorts below it. */
export function encodeTime(ms: number): string {
  let out = "";
  for (let i = 0; i < 10; i++) {
    out = ALPHABET[ms % 32]! + out;
    ms = Math.floor(ms / 32);
  }
  return out;
}

/** Adds one to a base32 number held one digit a byte; false when it was all 31s. */
function increment(digits: Uint8Array): boolean {
  for (let i = digits.length - 1; i >= 0; i--) {
    if (digits[i]! < 31) {
      digits[i] = digits[i]! + 1;
      return true;
    }
    digits[i] = 0;
  }
  return false;
}

export function ulidIds(clock: Clock = systemClock): IdGenerator {
  const ulid = ulidFactory();
  return { next: (kind) => ID_PREFIXES[kind] + ulid(clock.now().getTime()) };
}

/**
 * The ID of the child turn an `agents/NAME` call runs: fixed by the call's ID,
 * so it is known (and durable) from the commit that saves the call, before the
 * call starts, and a call started again after a crash can only ever reach the
 * same turn. Unique: the ULID part was made once, for the call.
 */
export function childRunOf(callId: string): string {
  return ID_PREFIXES.run + callId.slice(ID_PREFIXES.call.length);
}
