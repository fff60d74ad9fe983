// Type-checks the seed pages' examples (seed-examples/examples.ts): a type error there fails this file.
import { expectTypeOf, test } from "vitest";
import { seedExamples, type SeedExample } from "./seed-examples/examples.js";

test("the seed examples type-check as written", () => {
  expectTypeOf(seedExamples).toEqualTypeOf<SeedExample[]>();
});
