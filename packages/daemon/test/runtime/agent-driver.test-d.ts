/**
 * A turn's working state belongs to its agent's driver: other modules change
 * it through the methods of the driver and of the small objects it owns
 * (CallStops, TurnStops, TurnProgress, KnownConversations), never by writing
 * a field or a collection of it. This file fails to compile when a public
 * field becomes writable or a public Map, Set or array appears again.
 */
import { describe, expectTypeOf, it } from "vitest";
import type { AgentDriver } from "../../src/runtime/agent-driver.js";
import type { CallStops } from "../../src/runtime/call-stops.js";
import type { KnownConversations } from "../../src/runtime/known-conversations.js";
import type { TurnProgress } from "../../src/runtime/turn-progress.js";
import type { TurnStops } from "../../src/runtime/turn-stops.js";

type IfEquals<X, Y, A, B> = (<T>() => T extends X ? 1 : 2) extends <T>() => T extends Y ? 1 : 2 ? A : B;

/** The public data fields of T that can be assigned (methods left out). */
type WritableFields<T> = {
  // eslint-disable-next-line @typescript-eslint/no-unsafe-function-type
  [P in keyof T]-?: T[P] extends Function ? never : IfEquals<{ [Q in P]: T[P] }, { -readonly [Q in P]: T[P] }, P, never>;
}[keyof T];

/** The public fields of T holding a collection someone could change in place. */
type PublicCollections<T> = {
  [P in keyof T]-?: T[P] extends ReadonlyMap<unknown, unknown> | ReadonlySet<unknown> | readonly unknown[] ? P : never;
}[keyof T];

declare const d: AgentDriver;

describe("the state a driver owns", () => {
  it("has no public field that can be assigned, and no public collection", () => {
    expectTypeOf<WritableFields<AgentDriver>>().toEqualTypeOf<never>();
    expectTypeOf<PublicCollections<AgentDriver>>().toEqualTypeOf<never>();
    expectTypeOf<WritableFields<CallStops> | PublicCollections<CallStops>>().toEqualTypeOf<never>();
    expectTypeOf<WritableFields<TurnStops> | PublicCollections<TurnStops>>().toEqualTypeOf<never>();
    expectTypeOf<WritableFields<TurnProgress> | PublicCollections<TurnProgress>>().toEqualTypeOf<never>();
    expectTypeOf<WritableFields<KnownConversations> | PublicCollections<KnownConversations>>().toEqualTypeOf<never>();
  });

  it("is changed through methods only", () => {
    // @ts-expect-error closed is read-only: refuseWork() or close()
    d.closed = true;
    // @ts-expect-error def is read-only: redefine()
    d.def = d.def;
    // @ts-expect-error the runners are the driver's own
    void d.runners;
    // @ts-expect-error the places taken for started turns are handed over with handOverSlot()
    void d.startedSlots;
    // @ts-expect-error the open turns are behind KnownConversations' methods
    void d.conversations.openTurns;
    // @ts-expect-error the announced model calls are behind TurnProgress' methods
    void d.progress.announced;
    // @ts-expect-error the controllers of running turns are behind TurnStops' methods
    void d.turnStops.running;
  });
});
