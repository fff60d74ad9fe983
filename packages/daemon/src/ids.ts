import { monotonicFactory } from "ulid";
import { ID_PREFIXES, type IdKind } from "@wardrik/protocol";

/** Injected so tests can make IDs and time deterministic. */
export interface Clock {
  now(): Date;
}
export interface IdGenerator {
  next(kind: IdKind): string;
}

export const systemClock: Clock = { now: () => new Date() };

export function ulidIds(clock: Clock = systemClock): IdGenerator {
  const ulid = monotonicFactory();
  return { next: (kind) => ID_PREFIXES[kind] + ulid(clock.now().getTime()) };
}
