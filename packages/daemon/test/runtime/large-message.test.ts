/**
 * A large message is written once, in its message.queued event (message-text.ts):
 * its inputs row keeps the first characters and names the event, its history
 * row names the event instead of holding the text. Everything that reads the
 * text (the turn, a turn queued behind another, the history, the API's history
 * page, replay, the turn listing) still gets all of it. Real store, SQLite and
 * PostgreSQL.
 */
import { afterEach, describe, expect, it } from "vitest";
import { LARGE_TEXT_CHARS, TEXT_PREFIX_CHARS } from "../../src/store/message-text.js";
import type { AgentRow } from "../../src/store/store.js";
import { createHarness, turnWithOutputs, type Harness } from "../helpers/runtime-harness.js";
import { withSideConnection } from "../helpers/side-connection.js";

let h: Harness | undefined;
afterEach(async () => {
  await h?.close();
  h = undefined;
});

/** A text past the threshold whose end (the marker) lies beyond what an inputs row keeps. */
function largeText(marker: string): string {
  return "word ".repeat(Math.ceil(LARGE_TEXT_CHARS / 5)) + marker;
}

/** Where the marker is stored: rows of inputs, of history (user messages) and of events that hold it. */
async function copiesOf(marker: string): Promise<{ inputs: number; userMessages: number; events: string[] }> {
  return withSideConnection(h!.databaseUrl, async (c) => {
    const like = [`%${marker}%`];
    const inputs = await c.all<{ n: number }>("SELECT COUNT(*) AS n FROM inputs WHERE text LIKE ?", like);
    const messages = await c.all<{ n: number }>("SELECT COUNT(*) AS n FROM messages WHERE role = 'user' AND content LIKE ?", like);
    const events = await c.all<{ type: string }>("SELECT type FROM events WHERE data LIKE ? ORDER BY seq", like);
    return { inputs: Number(inputs[0]!.n), userMessages: Number(messages[0]!.n), events: events.map((e) => e.type) };
  });
}

async function inputRow(id: string): Promise<{ text: string; text_seq: number | null }> {
  return withSideConnection(h!.databaseUrl, async (c) => {
    const rows = await c.all<{ text: string; text_seq: number | null }>("SELECT text, text_seq FROM inputs WHERE id = ?", [id]);
    return { text: rows[0]!.text, text_seq: rows[0]!.text_seq === null ? null : Number(rows[0]!.text_seq) };
  });
}

/** What the store gives back of conversation `key`'s first user message, through each way it is read. */
async function readBack(agent: AgentRow, key: string, run: string) {
  const conv = (await h!.store.conversations.find(agent.id, key))!;
  const history = await h!.store.conversations.history(conv.id);
  const page = await h!.store.conversations.historyPage(conv.id, 0, 100);
  const userOf = (r: string) => history.find((e) => e.run === r && e.message.role === "user")?.message;
  return {
    history: userOf(run),
    page: page.filter((r) => r.run === run && r.role === "user").map((r) => JSON.parse(r.content) as unknown),
    replay: await h!.store.inputs.textsOf(run),
    listing: (await h!.store.inputs.firstTexts(conv.id, [run], 200)).get(run),
  };
}

describe("a large message", () => {
  it("is stored once, in its message.queued event, and read back whole by the turn, the history, replay and listings", async () => {
    h = await createHarness();
    const a = await h.agent({ name: "a", script: { steps: [{ text: "seen {{message}}" }] } });
    const text = largeText("MARKER-ONE");
    const end = await h.ask(a, text);
    expect(end.type).toBe("dev.wardrik.turn.completed");
    // The model was given the whole text.
    expect(end.data.reply).toBe(`seen ${text}`);

    // The text itself; the reply that quotes it is in the model's and the turn's events.
    expect(await copiesOf("MARKER-ONE")).toEqual({
      inputs: 0,
      userMessages: 0,
      events: ["dev.wardrik.message.queued", "dev.wardrik.model.replied", "dev.wardrik.turn.completed"],
    });
    const queued = h.events.find((e) => e.type === "dev.wardrik.message.queued")!;
    const input = await inputRow(queued.data.message as string);
    expect(input).toEqual({ text: text.slice(0, TEXT_PREFIX_CHARS), text_seq: queued.seq });

    const back = await readBack(a, "main", end.run!);
    expect(back.history).toEqual({ role: "user", text, input: queued.data.message });
    expect(back.page).toEqual([{ role: "user", text, input: queued.data.message }]);
    expect(back.replay).toEqual([text]);
    expect(back.listing).toBe(text.slice(0, 200));
  });

  it("queued behind an open turn is taken whole by the next turn, which stores it by reference too", async () => {
    h = await createHarness();
    const a = await h.agent({ name: "a", script: { steps: [{ text: "seen {{message}}", delay_ms: 150 }] } });
    const first = await h.runtime.enqueue(a, "main", "first");
    await h.waitFor((e) => e.type === "dev.wardrik.turn.started" && (e.data.messages as string[]).includes(first.message));
    const text = largeText("MARKER-TWO");
    const second = await h.runtime.enqueue(a, "main", text);
    // Queued, not taken yet: the row names the event already.
    const queuedSeq = second.seq;
    const started = await h.waitFor((e) => e.type === "dev.wardrik.turn.started" && (e.data.messages as string[]).includes(second.message));
    const end = await h.waitFor((e) => e.type === "dev.wardrik.turn.completed" && e.run === started.run);
    expect(end.data.reply).toBe(`seen ${text}`);

    expect(await inputRow(second.message)).toEqual({ text: text.slice(0, TEXT_PREFIX_CHARS), text_seq: queuedSeq });
    expect((await copiesOf("MARKER-TWO")).userMessages).toBe(0);
    const back = await readBack(a, "main", started.run!);
    expect(back.history).toEqual({ role: "user", text, input: second.message });
    expect(back.replay).toEqual([text]);
  });

  it("below the threshold is stored as before: in its inputs and history rows too", async () => {
    h = await createHarness();
    const a = await h.agent({ name: "a", script: { steps: [{ text: "ok" }] } });
    const text = "w".repeat(LARGE_TEXT_CHARS - 20) + "MARKER-SMALL";
    const end = await h.ask(a, text);
    expect(await copiesOf("MARKER-SMALL")).toEqual({ inputs: 1, userMessages: 1, events: ["dev.wardrik.message.queued"] });
    const back = await readBack(a, "main", end.run!);
    expect(back.history).toMatchObject({ role: "user", text });
    expect(back.replay).toEqual([text]);
  });

  it("as a tool's output is stored once in the history's stead, in its call's row; the history and its page read it back", async () => {
    const large = { rows: Array.from({ length: 400 }, (_, i) => `row ${i} ${"x".repeat(20)}`), end: "MARKER-TOOL" };
    const small = { ok: "MARKER-SMALL-TOOL" };
    const made = await turnWithOutputs({ large, small });
    h = made.h;
    const { agent: a, end } = made;
    expect(end.type).toBe("dev.wardrik.turn.completed");
    expect(JSON.stringify(large).length).toBeGreaterThanOrEqual(LARGE_TEXT_CHARS);

    const stored = await withSideConnection(h.databaseUrl, async (c) => ({
      toolRows: await c.all<{ content: string }>("SELECT content FROM messages WHERE role = 'tool'"),
      calls: await c.all<{ tool: string; result: string }>("SELECT tool, result FROM calls ORDER BY position"),
    }));
    expect(stored.toolRows).toHaveLength(1);
    const row = JSON.parse(stored.toolRows[0]!.content) as { results: Record<string, unknown>[] };
    expect(row.results.map((r) => [r.tool, r.outputInCall ?? false, r.output ?? null])).toEqual([
      ["t/large", true, null],
      ["t/small", false, small],
    ]);
    expect(stored.calls.map((c) => JSON.parse(c.result) as unknown)).toEqual([large, small]);

    const conv = (await h.store.conversations.find(a.id, "main"))!;
    const outputs = (m: { role: string; results?: { output: unknown }[] } | undefined) => m?.results?.map((r) => r.output);
    const history = await h.store.conversations.history(conv.id);
    expect(outputs(history.find((e) => e.message.role === "tool")?.message as never)).toEqual([large, small]);
    const page = await h.store.conversations.historyPage(conv.id, 0, 100);
    const pageTool = JSON.parse(page.find((r) => r.role === "tool")!.content) as { results: { output: unknown }[] };
    expect(outputs(pageTool as never)).toEqual([large, small]);
    expect(JSON.stringify(pageTool)).not.toContain("outputInCall");
  });
});
