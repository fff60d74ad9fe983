/**
 * The registry's redacting wrapper: every way a toolset hands out an outcome
 * is blanked, and everything else (kind, callInTransaction's presence,
 * waitFor, state kept on the toolset itself) works as without it.
 */
import { describe, expect, it } from "vitest";
import { SecretRedactor } from "../../src/secrets/redactor.js";
import type { Tx } from "../../src/store/db.js";
import { ToolRegistry } from "../../src/tools/tool-registry.js";
import type { RecallAnswer, ToolCallContext, ToolOutcome, ToolScope, Toolset } from "../../src/tools/toolset.js";

const SECRET = "sk-wrapped-0123456789";

/** A toolset whose every answer quotes the secret, and which keeps state on itself. */
class Quoting implements Toolset {
  readonly namespace = "quote";
  readonly kind = "files" as const;
  calls = 0;
  list() {
    return [{ name: "quote/it", description: "Quotes.", inputSchema: { type: "object" }, readOnly: true, idempotent: true }];
  }
  call(): Promise<ToolOutcome> {
    this.calls++;
    return Promise.resolve({ ok: true, output: { text: `it is ${SECRET}`, list: [SECRET] } });
  }
  callInTransaction(_tx: Tx): Promise<ToolOutcome> {
    this.calls++;
    return Promise.resolve({ ok: false, kind: "failed", error: `failed with ${SECRET}` });
  }
  recall(): Promise<RecallAnswer> {
    return Promise.resolve({ known: true, outcome: { ok: true, output: SECRET }, attempt: 1 });
  }
  waitFor(): Promise<boolean> {
    return Promise.resolve(true);
  }
  status(_scope: ToolScope) {
    return [{ name: "quote", status: "down", reason: `refused ${SECRET}` }];
  }
}

describe("a toolset in a registry with a redactor", () => {
  it("hands out no outcome or status with a known secret, and keeps the rest of the toolset as it is", async () => {
    const redactor = new SecretRedactor();
    redactor.add(SECRET, "KEY");
    const registry = new ToolRegistry({ redactor });
    const inner = new Quoting();
    registry.add(inner);
    const tool = (await registry.find("quote/it", { org: "o", agentId: "a" }))!;
    const ts = tool.toolset;
    const ctx = {} as ToolCallContext;
    expect(await ts.call("it", {}, ctx)).toEqual({ ok: true, output: { text: "it is [secret:KEY]", list: ["[secret:KEY]"] } });
    expect(await ts.callInTransaction!({} as Tx, "it", {}, ctx)).toEqual({ ok: false, kind: "failed", error: "failed with [secret:KEY]" });
    const question = { callId: "call_1", idempotencyKey: "call_1", attempt: 1, until: 0, runningMs: 10 };
    expect(await ts.recall!(question, { org: "o", agentId: "a" })).toEqual({
      known: true,
      outcome: { ok: true, output: "[secret:KEY]" },
      attempt: 1,
    });
    expect(ts.status!({ org: "o", agentId: "a" })).toEqual([{ name: "quote", status: "down", reason: "refused [secret:KEY]" }]);
    expect(ts.kind).toBe("files");
    expect(await ts.waitFor!("it", { org: "o", agentId: "a" }, 10)).toBe(true);
    // Calls ran on the toolset itself: its state is where it keeps it.
    expect(inner.calls).toBe(2);
  });
});
