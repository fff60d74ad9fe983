// The agent as a LangGraph.js user writes a tool-calling agent: a model node and a ToolNode in a
// StateGraph over the messages, looping while the model asks for tools (the graph of LangGraph's
// quick start), or `prebuilt`: the same made by createReactAgent. The checkpointer saves every step.
import { tool } from "@langchain/core/tools";
import { SystemMessage } from "@langchain/core/messages";
import { END, MessagesAnnotation, START, StateGraph } from "@langchain/langgraph";
import { createReactAgent, ToolNode, toolsCondition } from "@langchain/langgraph/prebuilt";
import { z } from "zod";

// Wardrik's bench agent has the same instructions.
const INSTRUCTIONS = "You are a benchmark agent.";

/** The benchmark tool, as Wardrik's `bench/lookup`: read-only, answers at once. */
export const lookup = tool(async ({ id }) => JSON.stringify({ id, status: "ok" }), {
  name: "lookup",
  description: "Look an ID up.",
  schema: z.object({ id: z.string() }),
});

/** @param {{ kind: "state-graph" | "prebuilt", model: import("./scripted-chat-model.mjs").ScriptedChatModel, checkpointer: unknown }} options */
export function buildAgent({ kind, model, checkpointer }) {
  const tools = [lookup];
  if (kind === "prebuilt") return createReactAgent({ llm: model, tools, prompt: INSTRUCTIONS, checkpointSaver: checkpointer });
  const withTools = model.bindTools(tools);
  const callModel = async (state) => ({ messages: [await withTools.invoke([new SystemMessage(INSTRUCTIONS), ...state.messages])] });
  return new StateGraph(MessagesAnnotation)
    .addNode("agent", callModel)
    .addNode("tools", new ToolNode(tools))
    .addEdge(START, "agent")
    .addConditionalEdges("agent", toolsCondition, ["tools", END])
    .addEdge("tools", "agent")
    .compile({ checkpointer });
}
