/**
 * A tool output known to be plain JSON (a worker's result, parsed from its
 * frame within the depth limit) is stored as it is; any other output is
 * measured and copied through JSON first (plain-json.ts). A redacted copy of
 * a plain output stays known as plain.
 */
import { afterEach, describe, expect, it } from "vitest";
import { SecretRedactor } from "../../src/secrets/redactor.js";
import { isPlainJsonOutcome, plainJsonOutcome } from "../../src/tools/plain-json.js";
import { redactOutcome } from "../../src/tools/redacting-toolset.js";
import { turnWithOutputs, type Harness } from "../helpers/runtime-harness.js";

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe("plain JSON tool outputs", () => {
  it("an output its outcome calls plain reaches the call's record as it is; another one as a copy", async () => {
    const marked = { rows: ["a", "b"] };
    const unmarked = { rows: ["a", "b"] };
    const made = await turnWithOutputs({ plain: marked, other: unmarked }, ["plain"]);
    h = made.h;
    expect(made.end.type).toBe("dev.wardrik.turn.completed");
    const outputOf = (tool: string) => h!.events.find((e) => e.type === "dev.wardrik.call.completed" && e.data.tool === tool)?.data.output;
    expect(outputOf("t/plain")).toBe(marked);
    expect(outputOf("t/other")).toEqual(unmarked);
    expect(outputOf("t/other")).not.toBe(unmarked);
  });

  it("a redacted copy of a plain output is plain too; of another output, not", () => {
    const redactor = new SecretRedactor();
    redactor.add("s3cret-value");
    const plain = redactOutcome(plainJsonOutcome({ v: "s3cret-value" }), redactor);
    const other = redactOutcome({ ok: true, output: { v: "s3cret-value" } }, redactor);
    expect(plain).toEqual({ ok: true, output: { v: "[redacted]" } });
    expect(isPlainJsonOutcome(plain)).toBe(true);
    expect(isPlainJsonOutcome(other)).toBe(false);
  });
});
