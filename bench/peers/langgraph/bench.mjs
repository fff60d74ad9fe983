// npm run bench -- peer-langgraph W1|W2|W3 [state-graph|prebuilt] [async|sync|exit]
// The same workloads as Wardrik's W1, W2 and W3, run by LangGraph.js with its SQLite checkpointer, printing
// one JSON line with the same figures. The agent is a StateGraph with a model node and a ToolNode unless
// `prebuilt` (createReactAgent); durability is LangGraph's default `async` unless given.
const [workload, ...options] = process.argv.slice(2);
const KINDS = ["state-graph", "prebuilt"];
const DURABILITIES = ["async", "sync", "exit"];
const unknown = options.filter((o) => !KINDS.includes(o) && !DURABILITIES.includes(o));
if (!["W1", "W2", "W3"].includes(workload) || unknown.length > 0) {
  console.error(
    `usage: peer-langgraph W1|W2|W3 [${KINDS.join("|")}] [${DURABILITIES.join("|")}]` +
      (unknown.length > 0 ? `; not an option: ${unknown.join(" ")}` : workload ? `; not a workload: ${workload}` : ""),
  );
  process.exit(2);
}
const kind = options.find((o) => KINDS.includes(o)) ?? "state-graph";
const durability = options.find((o) => DURABILITIES.includes(o)) ?? "async";

// A developer's LangSmith settings would send a trace per turn over the network: the peer runs untraced, as Wardrik does.
for (const key of ["LANGSMITH_TRACING", "LANGSMITH_TRACING_V2", "LANGCHAIN_TRACING", "LANGCHAIN_TRACING_V2"]) delete process.env[key];

if (workload === "W3") {
  const { runConcurrent } = await import("./concurrent.mjs");
  await runConcurrent({ kind, durability });
} else {
  const { runTurns } = await import("./turns.mjs");
  await runTurns(workload, { kind, durability });
}
