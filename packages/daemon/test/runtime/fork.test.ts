/**
 * `fork`: a new conversation whose history is another's as it stood at one
 * event of the log, on the real store (SQLite, and PostgreSQL in the
 * postgres projects). The original is never changed; the fork is recorded
 * with its origin; a turn still running at that event is left out whole.
 */
import { afterEach, describe, expect, it } from "vitest";
import { WardrikError } from "@wardrik/protocol";
import type { StoredEvent } from "../../src/events/event-bus.js";
import type { AgentRow } from "../../src/store/store.js";
import { createHarness, FnToolset, type Harness } from "../helpers/runtime-harness.js";

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

const SCRIPT = {
  scenarios: [
    { match: "^slow", steps: [{ tool_calls: [{ tool: "gate/wait", args: {} }] }, { text: "waited: {{result}}" }] },
    {
      match: "^note",
      steps: [{ tool_calls: [{ tool: "files/write", args: { path: "n.md", content: "{{message}}" } }] }, { text: "noted" }],
    },
  ],
  steps: [{ text: "You said: {{message}}" }],
};

/** A gate tool: its call waits until the test opens it. */
function gate(): { toolset: FnToolset; open: () => void } {
  let open!: () => void;
  const opened = new Promise<void>((r) => (open = r));
  const toolset = new FnToolset("gate").add("wait", async () => {
    await opened;
    return { ok: true, output: "open" };
  });
  return { toolset, open };
}

async function history(agent: AgentRow, key: string): Promise<string[]> {
  const conv = await h!.store.conversations.find(agent.id, key);
  const entries = await h!.store.conversations.history(conv!.id);
  return entries.map((e) => {
    const m = e.message;
    return m.role === "user"
      ? `user: ${m.text}`
      : m.role === "assistant"
        ? `assistant: ${m.text}${m.toolCalls.length ? " +calls" : ""}`
        : "tool";
  });
}

const ended = (e: StoredEvent) => e.type === "dev.wardrik.turn.completed";

describe("fork", () => {
  it("at the end of each turn takes the turns that had ended; the original is untouched", async () => {
    h = await createHarness();
    const a = await h.agent({ name: "a", script: SCRIPT });
    const t1 = await h.ask(a, "one");
    const t2 = await h.ask(a, "note two");
    await h.ask(a, "three");
    const original = await history(a, "main");
    expect(original).toEqual([
      "user: one",
      "assistant: You said: one",
      "user: note two",
      "assistant:  +calls",
      "tool",
      "assistant: noted",
      "user: three",
      "assistant: You said: three",
    ]);

    const f1 = await h.runtime.fork(a, "main", t1.seq);
    expect(f1).toMatchObject({ conversation: `main@${t1.seq}`, from: "main", at_seq: t1.seq, messages: 2, turns: 1 });
    expect(f1.open_run).toBeUndefined();
    expect(await history(a, f1.conversation)).toEqual(original.slice(0, 2));

    const f2 = await h.runtime.fork(a, "main", t2.seq, "after-two");
    expect(f2).toMatchObject({ conversation: "after-two", messages: 6, turns: 2 });
    expect(await history(a, "after-two")).toEqual(original.slice(0, 6));

    // Before the first turn ended: an empty history, and the first turn named as left out.
    const early = await h.runtime.fork(a, "main", t1.seq - 1, "early");
    expect(early).toMatchObject({ messages: 0, turns: 0, open_run: t1.run });

    // The original is what it was; the fork is on the record with where it came from.
    expect(await history(a, "main")).toEqual(original);
    const forked = (await h.store.events.list(a.id, 0, 1000)).filter((e) => e.type === "dev.wardrik.conversation.forked");
    expect(forked.map((e) => e.data)).toEqual([
      {
        conversation: f1.conversation,
        conversation_id: f1.conversation_id,
        from: "main",
        from_conversation_id: expect.any(String),
        at_seq: t1.seq,
        messages: 2,
        turns: 1,
      },
      {
        conversation: "after-two",
        conversation_id: f2.conversation_id,
        from: "main",
        from_conversation_id: expect.any(String),
        at_seq: t2.seq,
        messages: 6,
        turns: 2,
      },
      {
        conversation: "early",
        conversation_id: early.conversation_id,
        from: "main",
        from_conversation_id: expect.any(String),
        at_seq: t1.seq - 1,
        messages: 0,
        turns: 0,
        open_run: t1.run,
      },
    ]);
    expect(forked.map((e) => e.seq)).toEqual([f1.seq, f2.seq, early.seq]);
  });

  it("in the middle of a turn leaves that turn out whole, and the fork goes on from there with that history", async () => {
    const g = gate();
    h = await createHarness({ toolsets: [g.toolset] });
    const a = await h.agent({ name: "a", script: SCRIPT });
    await h.ask(a, "one");
    const slow = h.ask(a, "slow two");
    const started = await h.waitFor((e) => e.type === "dev.wardrik.call.started");
    const mid = await h.runtime.fork(a, "main", started.seq, "mid");
    expect(mid).toMatchObject({ messages: 2, turns: 1, open_run: started.run });
    g.open();
    await slow;
    expect(await history(a, "mid")).toEqual(["user: one", "assistant: You said: one"]);

    // A turn in the fork sees the copied history, not the turn that was left out.
    const next = await h.ask(a, "three", "mid");
    expect(next.data.reply).toBe("You said: three");
    const prompt = JSON.stringify(h.models.get("a")!.calls.at(-1)!.prompt);
    expect(prompt).toContain("You said: one");
    expect(prompt).not.toContain("slow two");
    expect(await history(a, "mid")).toEqual(["user: one", "assistant: You said: one", "user: three", "assistant: You said: three"]);
    expect((await history(a, "main")).length).toBe(6);

    // A fork of the fork keeps what the first fork copied in.
    const again = await h.runtime.fork(a, "mid", next.seq, "mid-again");
    expect(again).toMatchObject({ messages: 4, turns: 1 });
    expect(await history(a, "mid-again")).toEqual(await history(a, "mid"));
  });

  it("refuses a key in use, an event past the log, an unknown conversation, and a point a later clear erased", async () => {
    h = await createHarness();
    const a = await h.agent({ name: "a", script: SCRIPT });
    const t1 = await h.ask(a, "one");
    const refused = async (p: Promise<unknown>) => {
      const err = await p.then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(WardrikError.isInstance(err), String(err)).toBe(true);
      return err as WardrikError;
    };
    await h.runtime.fork(a, "main", t1.seq, "copy");
    expect((await refused(h.runtime.fork(a, "main", t1.seq, "copy"))).code).toBe("conflict");
    const last = await h.store.events.lastSeq(a.id);
    const past = await refused(h.runtime.fork(a, "main", last + 5));
    expect(past.code).toBe("bad_request");
    expect(past.message).toContain(`ends at event ${last}`);
    expect((await refused(h.runtime.fork(a, "nope", 1))).code).toBe("not_found");

    await h.runtime.clear(a, "main");
    const cleared = (await h.store.events.list(a.id, 0, 1000)).find((e) => e.type === "dev.wardrik.conversation.cleared")!;
    const lost = await refused(h.runtime.fork(a, "main", t1.seq, "lost"));
    expect(lost.code).toBe("conflict");
    expect(lost.message).toContain(`cleared at event ${cleared.seq}`);
    // From the clear on, the fork is the (empty) history after it.
    expect(await h.runtime.fork(a, "main", cleared.seq, "after-clear")).toMatchObject({ messages: 0, turns: 0 });
    const t2 = await h.ask(a, "two");
    expect(ended(t2)).toBe(true);
    expect(await h.runtime.fork(a, "main", t2.seq, "after-two")).toMatchObject({ messages: 2, turns: 1 });
  });
});
