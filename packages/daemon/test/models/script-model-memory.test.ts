/**
 * A daemon's scripted model (`script/NAME`) keeps none of the prompts it is
 * called with: the testing kit records the last 1,000 for tests to look at,
 * and in a daemon that ran long conversations those prompts held most of its
 * memory (900 MB after 13,000 turns of W1 over HTTP).
 */
import type { LanguageModelV3CallOptions } from "@ai-sdk/provider";
import type { ScriptedModel } from "@wardrik/testing";
import { describe, expect, it } from "vitest";
import { resolveModel } from "../../src/models/index.js";

const CALL: LanguageModelV3CallOptions = { prompt: [{ role: "user", content: [{ type: "text", text: "hi" }] }] };

describe("a daemon's scripted model", () => {
  it("answers and counts its calls but records no prompt", async () => {
    const resolved = resolveModel("script/echo", { models: {}, dir: "/nowhere" });
    const model = resolved.model as unknown as ScriptedModel;
    for (let i = 0; i < 3; i++) {
      const reply = await resolved.model.doGenerate(CALL);
      expect(reply.content).toEqual([{ type: "text", text: "You said: hi" }]);
    }
    expect(model.callCount).toBe(3);
    expect(model.calls).toEqual([]);
  });
});
