import { z } from "zod";
import { ConversationKey } from "./http.js";

/**
 * Bodies of the routes that use the record as a time machine: a fork of a
 * conversation as it stood at an event, and a replay of recorded turns (or
 * of a new message) in a scratch copy whose tool results come from the
 * record. Shared by the daemon (validation, OpenAPI) and clients.
 */

export const ForkBody = z
  .strictObject({
    at: z.number().int().min(1).describe("The event (its seq in the agent's log) the fork's history is taken at"),
    as: ConversationKey.optional().describe("The new conversation's key (default: the original's key, @ and the seq, such as main@42)"),
  })
  .meta({ id: "ForkBody" });
export type ForkBody = z.input<typeof ForkBody>;

export const ForkResult = z
  .object({
    conversation: z.string().describe("The new conversation's key"),
    conversation_id: z.string(),
    from: z.string().describe("The original conversation's key"),
    at_seq: z.number().int(),
    messages: z.number().int().describe("Messages copied"),
    turns: z.number().int().describe("Turns of the original whose messages were copied: those that had ended by at_seq"),
    open_run: z.string().optional().describe("A turn that was still running at at_seq; its messages were left out"),
    seq: z.number().int().describe("The conversation.forked event's seq"),
  })
  .meta({ id: "ForkResult" });
export type ForkResult = z.infer<typeof ForkResult>;

/** A tool name as agent files write it (namespace/tool), or a pattern such as workers/*. */
const ToolName = z
  .string()
  .min(1)
  .max(200)
  .regex(/^[^\s]+$/, "must be a tool name such as workers/find_order, without spaces");

/** A file's text sent along with the request (an agent file or a policy file the daemon has not loaded). */
const SentFile = z.strictObject({
  file: z.string().min(1).max(500).describe("The file's name, as errors should name it (agents/shop.md)"),
  text: z.string().max(1_000_000),
});

export const ReplayBody = z
  .strictObject({
    conversation: ConversationKey.optional().describe("The recorded conversation whose turns run again"),
    turns: z
      .strictObject({ from: z.number().int().min(1), to: z.number().int().min(1).optional() })
      .optional()
      .describe("Which of the conversation's turns (numbered from 1 in the order they started); without to, up to the last; default all"),
    message: z.string().min(1).max(100_000).optional().describe("Instead of recorded turns: one new turn from this message"),
    tool_results: z
      .record(ToolName, z.unknown())
      .optional()
      .describe("With message: the result each tool gives, whatever its arguments (namespace/tool -> result)"),
    model: z.string().min(1).max(300).optional().describe("The model to use instead of the agent's"),
    agent_file: SentFile.optional().describe("An agent file to use instead of the agent's loaded definition"),
    policy: z.string().min(1).max(200).optional().describe("A policy of policies/ to decide the calls instead of the agent's"),
    policy_file: SentFile.optional().describe("A policy file's text to decide the calls instead of the agent's policy"),
    live: z.array(ToolName).max(100).optional().describe("Tools that may really run when a call is not in the record"),
    judge: z
      .strictObject({ criteria: z.array(z.string().min(1).max(10_000)).min(1).max(20), model: z.string().min(1).max(300).optional() })
      .optional()
      .describe("Criteria a judge model checks the last replayed reply against (default model: the replay's)"),
  })
  .meta({ id: "ReplayBody" });
export type ReplayBody = z.input<typeof ReplayBody>;

export const ReplaySource = z
  .enum(["record", "scripted", "live", "missing", "none"])
  .describe(
    "Where a call's result came from: record (a recorded call with the same tool and arguments), scripted (tool_results), live (the tool really ran: named in live), missing (answered 'not in the record' / 'not scripted'), none (it reached no tool: denied, invalid, or waiting for a person)",
  );
export type ReplaySource = z.infer<typeof ReplaySource>;

const RecordedCallView = z.object({
  tool: z.string(),
  args: z.unknown(),
  status: z.string(),
  decision: z.string().nullable(),
  output: z.unknown().optional(),
  error: z.string().optional(),
  cost_usd: z.number(),
});

const ReplayCallView = RecordedCallView.extend({
  source: ReplaySource,
  matched: z.boolean().describe("The record holds a call with the same tool and arguments"),
});

const TurnOutcome = z.object({
  status: z.string().describe("completed, failed, cancelled, or would_ask (the replay stopped where a person would be asked)"),
  reply: z.string().optional(),
  reason: z.string().optional(),
  iterations: z.number().int(),
  cost_usd: z.number(),
});

export const ReplayTurn = z
  .object({
    turn: z.number().int().describe("The turn's number in its conversation (1 for a message)"),
    run: z.string().optional().describe("The original turn's ID"),
    messages: z.array(z.string()),
    original: TurnOutcome.extend({ calls: z.array(RecordedCallView) }).optional(),
    replay: TurnOutcome.extend({ calls: z.array(ReplayCallView) }),
    diverged: z
      .boolean()
      .describe(
        "The replay called other tools or arguments than the original, a call was refused in one and not the other, or a call was not in the record",
      ),
  })
  .meta({ id: "ReplayTurn" });
export type ReplayTurn = z.infer<typeof ReplayTurn>;

export const JudgeVerdict = z
  .object({ criterion: z.string(), pass: z.boolean(), reason: z.string(), model: z.string(), cost_usd: z.number() })
  .meta({ id: "JudgeVerdict" });
export type JudgeVerdict = z.infer<typeof JudgeVerdict>;

export const ReplayReport = z
  .object({
    agent: z.string(),
    conversation: z.string().optional(),
    model: z.string().describe("The model the replay used"),
    policy: z.string().nullable().describe("The policy that decided the replay's calls (null: the built-in defaults)"),
    live: z.array(z.string()),
    turns: z.array(ReplayTurn),
    cost_usd: z.number().describe("What the replay's model calls cost (not added to the agent's spend)"),
    judged: z.array(JudgeVerdict).optional(),
  })
  .meta({ id: "ReplayReport" });
export type ReplayReport = z.infer<typeof ReplayReport>;
