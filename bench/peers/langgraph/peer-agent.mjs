// One LangGraph agent on a fresh SQLite file, and the check that the file holds each conversation's history.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SqliteSaver } from "@langchain/langgraph-checkpoint-sqlite";
import Database from "better-sqlite3";
import { buildAgent } from "./agent-graph.mjs";
import { openCountedDatabase } from "./counted-database.mjs";
import { ScriptedChatModel } from "./scripted-chat-model.mjs";

const here = new URL(".", import.meta.url);
const versionOf = (pkg) => JSON.parse(readFileSync(new URL(`node_modules/${pkg}/package.json`, here), "utf8")).version;

/** What the JSON line says about the peer, so a figure is never read without its versions. */
export function peerInfo(kind, durability) {
  return {
    peer: "langgraph",
    langgraph: versionOf("@langchain/langgraph"),
    checkpoint_sqlite: versionOf("@langchain/langgraph-checkpoint-sqlite"),
    langchain_core: versionOf("@langchain/core"),
    agent: kind,
    durability,
  };
}

/** @param {{ kind: "state-graph" | "prebuilt", durability: "async" | "sync" | "exit", calls: number, delayMs?: number }} options */
export function openPeerAgent({ kind, durability, calls, delayMs }) {
  const dir = mkdtempSync(join(tmpdir(), "wardrik-peer-langgraph-"));
  const path = join(dir, "checkpoints.db");
  const database = openCountedDatabase(path);
  const checkpointer = new SqliteSaver(database.db);
  const agent = buildAgent({ kind, model: new ScriptedChatModel({ calls, delayMs }), checkpointer });
  const perTurn = calls + 3; // the user's message, the model's tool calls, one result per call, the final text

  return {
    database,
    /** One turn of a conversation; throws unless it ends with the final text after the whole history so far. */
    async turn(threadId, expectedTurn) {
      const out = await agent.invoke(
        { messages: [{ role: "user", content: "go" }] },
        { configurable: { thread_id: threadId }, durability },
      );
      const last = out.messages.at(-1);
      if (last?.type !== "ai" || last.content !== "done" || (last.tool_calls?.length ?? 0) > 0) {
        throw new Error(`${threadId}: the turn did not end with the final text: ${JSON.stringify(last)}`);
      }
      if (expectedTurn !== undefined && out.messages.length !== expectedTurn * perTurn) {
        throw new Error(`${threadId}: turn ${expectedTurn} sees ${out.messages.length} messages, expected ${expectedTurn * perTurn}`);
      }
    },
    /** Reads every conversation back from the file over a new connection: `turns` whole turns each, in order. */
    async checkHistory(threadIds, turns) {
      const reader = new Database(path);
      try {
        const saver = new SqliteSaver(reader);
        for (const threadId of threadIds) {
          const saved = await saver.getTuple({ configurable: { thread_id: threadId } });
          const messages = saved?.checkpoint.channel_values.messages ?? [];
          const types = messages.map((m) => m.type);
          const expected = Array.from({ length: turns }, () => ["human", "ai", ...Array(calls).fill("tool"), "ai"]).flat();
          if (JSON.stringify(types) !== JSON.stringify(expected)) {
            throw new Error(`${threadId}: the checkpoint holds [${types.join(",")}], expected ${turns} turns of ${perTurn} messages`);
          }
          const results = messages.filter((m) => m.type === "tool");
          if (!results.every((m) => JSON.parse(m.content).status === "ok"))
            throw new Error(`${threadId}: a saved tool result is not the lookup's`);
          if (!messages.filter((m, i) => i % perTurn === perTurn - 1).every((m) => m.content === "done")) {
            throw new Error(`${threadId}: a saved turn does not end with the final text`);
          }
        }
      } finally {
        reader.close();
      }
    },
    close() {
      database.db.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
