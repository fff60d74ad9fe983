import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  type CallToolResult,
} from "@modelcontextprotocol/sdk/types.js";
import { describeIssues } from "../http/http-errors.js";
import type { ApiServices } from "../http/services.js";
import { VERSION } from "../version.js";
import { AskArguments, agentTool } from "./agent-tool.js";
import { askAgent, describeCalls, type AskOutcome } from "./ask-agent.js";

/** Tools per tools/list page. */
const PAGE = 100;

/**
 * One org's agents as an MCP server: a tool per agent, whose call sends the
 * agent a message and answers with its reply. Made per HTTP request (the
 * endpoint is stateless), so the tool list is always the org's agents now.
 *
 * The SDK's low-level `Server` rather than `McpServer`: the tools are rows
 * of the org's agents, listed a page at a time and looked up by name on a
 * call, not a fixed set registered up front.
 */
export function agentsMcpServer(svc: ApiServices, org: string): Server {
  const server = new Server(
    { name: "wardrik", title: "Wardrik agents", version: VERSION },
    {
      capabilities: { tools: {} },
      instructions:
        `Each tool is a Wardrik agent of org ${org}: call it with a message and it answers when its turn ends. ` +
        "The agent's tool calls run under its policy; one that needs a person's approval is reported with the commands that decide it.",
    },
  );

  server.setRequestHandler(ListToolsRequestSchema, async (req) => {
    const cursor = req.params?.cursor;
    const after = cursor === undefined ? undefined : readCursor(cursor);
    const rows = await svc.store.agents.list(org, { ...(after !== undefined ? { after } : {}), limit: PAGE + 1 });
    const page = rows.slice(0, PAGE);
    return {
      // An unreadable agent cannot take a message; it comes back once its file is fixed.
      tools: page.filter((r) => r.status !== "unreadable").map(agentTool),
      ...(rows.length > PAGE ? { nextCursor: Buffer.from(page.at(-1)!.name).toString("base64url") } : {}),
    };
  });

  server.setRequestHandler(CallToolRequestSchema, async (req, extra): Promise<CallToolResult> => {
    const name = req.params.name;
    const agent = await svc.store.agents.byName(org, name);
    if (!agent) throw new McpError(ErrorCode.InvalidParams, `No agent ${name} in org ${org}; tools/list shows the agents.`);
    const parsed = AskArguments.safeParse(req.params.arguments ?? {});
    if (!parsed.success)
      return errorResult(`Invalid arguments for ${name}: ${describeIssues("body", parsed.error.issues, Object.keys(AskArguments.shape))}`);
    if (agent.status === "unreadable") return errorResult(`Agent ${name} is unreadable: ${agent.reason ?? "unknown reason"}`);
    const token = extra._meta?.progressToken;
    let step = 0;
    const progress = async (message: string) => {
      if (token === undefined || extra.signal.aborted) return;
      step += 1;
      await extra
        .sendNotification({ method: "notifications/progress", params: { progressToken: token, progress: step, message } })
        .catch(() => undefined);
    };
    const ref = org === svc.org ? name : `${org}/${name}`;
    const outcome = await askAgent({ svc, agent, args: parsed.data, ref, signal: extra.signal, progress });
    return toResult(agent.id, ref, parsed.data.conversation ?? "main", outcome);
  });
  return server;
}

function toResult(agentId: string, ref: string, conversation: string, o: AskOutcome): CallToolResult {
  const base = { agent: agentId, conversation };
  switch (o.status) {
    case "completed":
      return { content: [{ type: "text", text: o.reply }], structuredContent: { status: o.status, ...base, run: o.run, reply: o.reply } };
    case "waiting_for_approval": {
      const lines = [
        o.queuedBehind
          ? `The message is queued behind turn ${o.run} of ${ref}, which waits for a person to approve ${describeCalls(o.approvals)}:`
          : `${ref} is waiting for a person to approve ${o.approvals.length === 1 ? "a tool call" : `${o.approvals.length} tool calls`} before it can go on:`,
      ];
      for (const a of o.approvals) {
        lines.push(`- ${a.tool} (${a.call}) with ${JSON.stringify(a.args)}${a.reason ? `: ${a.reason}` : ""}`);
        lines.push(`  approve: ${a.approve}   (HTTP: ${a.approve_route})`);
        lines.push(`  deny:    ${a.deny}   (HTTP: ${a.deny_route}, body {"reason": "..."})`);
      }
      lines.push(
        `Once decided, the turn goes on by itself; its reply is then at GET /v1/agents/${agentId}/turns/${o.run} (or: wardrik history ${ref} --conversation ${conversation}).`,
        "To wait for the decision instead of this answer, call with wait_for_approval: true.",
      );
      return {
        content: [{ type: "text", text: lines.join("\n") }],
        structuredContent: { status: o.status, ...base, run: o.run, approvals: o.approvals },
      };
    }
    case "dropped":
    case "stopped":
      return errorResult(
        `The message to ${ref} was ${o.status === "dropped" ? "dropped" : "queued, but this call stopped waiting; the turn goes on"}: ${o.reason}`,
      );
    default:
      return errorResult(`The turn ${o.run ?? ""} of ${ref} ${o.status}: ${o.reason}`);
  }
}

function errorResult(text: string): CallToolResult {
  return { content: [{ type: "text", text }], isError: true };
}

function readCursor(cursor: string): string {
  const name = Buffer.from(cursor, "base64url").toString();
  if (name === "") throw new McpError(ErrorCode.InvalidParams, "The cursor is not one this server gave out; pass a page's nextCursor.");
  return name;
}
