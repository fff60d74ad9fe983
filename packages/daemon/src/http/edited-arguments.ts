import { WardrikError } from "@wardrik/protocol";
import { editedArgumentsModule } from "../json-schema/schema-problems.js";
import type { StoredMessage } from "../store/message-format.js";
import type { AgentRow } from "../store/rows.js";
import type { Store } from "../store/store.js";
import type { ApiServices } from "./services.js";

/**
 * Arguments a person edited before approving a call must fit the tool's
 * input schema, as the model's own had to: a tool never receives what it
 * cannot take. The check is `@wardrik/protocol`'s, the one the web console
 * runs before it sends, so both say the same thing.
 */
export async function checkEditedArguments(
  svc: ApiServices,
  agent: AgentRow,
  callId: string,
  args: Record<string, unknown>,
): Promise<void> {
  const call = await svc.store.calls.get(callId);
  // An unknown or undecidable call: the approval itself answers with the right error.
  if (!call || call.agent_id !== agent.id || call.status !== "waiting") return;
  const tool = (await svc.describeTools(agent)).tools.find((t) => t.name === call.tool);
  const check = (await editedArgumentsModule()).checkEditedArguments(call.tool, tool?.input_schema, args);
  if (!check.ok) throw new WardrikError(check.code, check.message);
}

/**
 * A page of history as people should read it: a tool call a person approved
 * with edited arguments shows what it ran with (`args`), what the model asked
 * for (`original_args`) and `edited: true`. The stored message keeps the
 * model's own words, since that is what the model wrote and reads back.
 */
export async function withEditedArguments(store: Store, messages: StoredMessage[]): Promise<StoredMessage[]> {
  const ids = messages.flatMap((m) => (m.role === "assistant" ? m.toolCalls.map((c) => c.callId) : []));
  if (ids.length === 0) return messages;
  const edited = new Map((await store.calls.edited(ids)).map((c) => [c.id, c]));
  if (edited.size === 0) return messages;
  return messages.map((m) => {
    if (m.role !== "assistant" || !m.toolCalls.some((c) => edited.has(c.callId))) return m;
    const toolCalls = m.toolCalls.map((c) => {
      const row = edited.get(c.callId);
      return row
        ? { ...c, args: JSON.parse(row.args) as unknown, original_args: JSON.parse(row.original_args!) as unknown, edited: true }
        : c;
    });
    return { ...m, toolCalls };
  });
}
