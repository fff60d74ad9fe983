import { afterEach, describe, expect, it } from "vitest";
import { MAX_CACHED_PROMPT_CHARS } from "../../src/runtime/agent-driver.js";
import type { AgentDriver } from "../../src/runtime/agent-driver.js";
import type { AgentRow } from "../../src/store/rows.js";
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

/** One turn of conversation `key` with `text`, waited for to its end; the conversation's ID. */
async function turn(harness: Harness, agent: AgentRow, key: string, text: string): Promise<string> {
  const { message } = await harness.runtime.enqueue(agent, key, text);
  const started = await harness.waitFor(
    (e) => e.type === "dev.wardrik.turn.started" && (e.data.messages as string[] | undefined)?.includes(message) === true,
  );
  await harness.waitFor((e) => e.type === "dev.wardrik.turn.completed" && e.run === started.run);
  return String(started.data.conversation_id);
}

function cachedConversations(harness: Harness, agentId: string): string[] {
  const driver = (harness.runtime as unknown as { drivers: Map<string, AgentDriver> }).drivers.get(agentId)!;
  return driver.conversationIds();
}

describe("prompt cache of an awake agent", () => {
  it("keeps the prompts of fifty small conversations: each turn of each finds its prompt in memory", async () => {
    h = await createHarness();
    const a = await h.agent({ name: "a", script: { steps: [{ text: "ok" }] } });
    // Fifty clients each in a conversation of its own (the load bench): under a bound of 32 conversations every
    // turn dropped a prompt that the next turn of another conversation read back from the store.
    const ids: string[] = [];
    for (let i = 0; i < 50; i++) ids.push(await turn(h, a, `c${i}`, `r0-c${i}`));
    expect(new Set(cachedConversations(h, a.id))).toEqual(new Set(ids));
  });

  it("keeps at most MAX_CACHED_PROMPT_CHARS of text, dropping the least recently used, and a prompt read back from the store is whole", async () => {
    h = await createHarness();
    const a = await h.agent({ name: "a", script: { steps: [{ text: "ok" }] } });
    // Ten conversations of a sixth of the bound each: together more than it, so some are dropped.
    const big = Math.ceil(MAX_CACHED_PROMPT_CHARS / 6);
    const conversations = 10;
    const first = (i: number) => `${String(i).padEnd(big, "x")}`;
    let lastConversation = "";
    for (let i = 0; i < conversations; i++) lastConversation = await turn(h, a, `c${i}`, first(i));
    const cached = cachedConversations(h, a.id);
    expect(cached.length).toBeLessThan(conversations);
    expect(cached.length).toBeGreaterThanOrEqual(5);
    // The most recently used are the ones kept.
    expect(cached).toContain(lastConversation);

    for (let i = 0; i < conversations; i++) await turn(h, a, `c${i}`, `r1-c${i}`);
    const calls = h.models.get("a")!.calls;
    expect(calls).toHaveLength(2 * conversations);
    // Second round: every conversation's prompt is its own first exchange and the new message, whether
    // its prompt stayed cached or was dropped and read again from the store.
    for (let i = 0; i < conversations; i++) {
      expect(texts(calls[conversations + i]!.prompt as never)).toEqual([first(i), "ok", `r1-c${i}`]);
    }
  });
});
