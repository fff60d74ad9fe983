import { afterEach, describe, expect, it } from "vitest";
import { MAX_CACHED_PROMPTS } from "../../src/runtime/agent-driver.js";
import type { AgentDriver } from "../../src/runtime/agent-driver.js";
import { createHarness, type Harness } from "../helpers/runtime-harness.js";

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** The user and assistant texts of a model call's prompt, in order. */
function texts(prompt: { role: string; content: unknown }[]): string[] {
  return prompt
    .filter((m) => m.role === "user" || m.role === "assistant")
    .map((m) => (m.content as { type: string; text?: string }[]).map((p) => p.text ?? "").join(""));
}

describe("prompt cache of an awake agent", () => {
  it("keeps at most MAX_CACHED_PROMPTS conversations in memory, and a conversation read back from the store has its whole history", async () => {
    h = await createHarness();
    const a = await h.agent({ name: "a", script: { steps: [{ text: "ok" }] } });
    const conversations = MAX_CACHED_PROMPTS + 8;
    let lastConversation = "";
    for (let round = 0; round < 2; round++) {
      for (let i = 0; i < conversations; i++) {
        const { message } = await h.runtime.enqueue(a, `c${i}`, `r${round}-c${i}`);
        const started = await h.waitFor(
          (e) => e.type === "dev.wardrik.turn.started" && (e.data.messages as string[] | undefined)?.includes(message) === true,
        );
        await h.waitFor((e) => e.type === "dev.wardrik.turn.completed" && e.run === started.run);
        lastConversation = String(started.data.conversation_id);
      }
    }
    const calls = h.models.get("a")!.calls;
    expect(calls).toHaveLength(2 * conversations);
    // Second round: every conversation's prompt is its own first exchange and the new message, whether
    // its prompt stayed cached or was dropped and read again from the store.
    for (let i = 0; i < conversations; i++) {
      expect(texts(calls[conversations + i]!.prompt as never)).toEqual([`r0-c${i}`, "ok", `r1-c${i}`]);
    }
    const driver = (h.runtime as unknown as { drivers: Map<string, AgentDriver> }).drivers.get(a.id)!;
    const cached = driver.conversationIds();
    expect(cached.length).toBeLessThanOrEqual(MAX_CACHED_PROMPTS);
    // The most recently used are the ones kept.
    expect(cached).toContain(lastConversation);
  });
});
