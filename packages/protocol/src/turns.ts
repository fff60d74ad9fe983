import { z } from "zod";
import { queryInteger } from "./http.js";

/** Turns as the HTTP API shows them: one turn in full, and a conversation's turns a page at a time. */

export const TurnStatus = z.enum(["running", "parked", "completed", "failed", "cancelled"]);

/** What a turn's view and its line in a list share. */
const TurnFigures = z.object({
  id: z.string(),
  conversation: z.string(),
  status: TurnStatus,
  reason: z.string().optional(),
  iterations: z.number().int().describe("Model calls made"),
  spend_usd: z.number().describe("What the turn spent: its model calls, judges, compaction, and costs tools reported"),
  parked_ms: z.number().int().describe("Milliseconds the turn waited for a person (not counting a wait still going on)"),
  started_at: z.string(),
  ended_at: z.string().optional(),
});

export const TurnView = TurnFigures.extend({
  agent: z.string(),
  reply: z.string().optional(),
  output: z.unknown().optional().describe("The reply as JSON, for an agent with an output schema (the reply fits it)"),
  messages: z.array(z.string()),
  calls: z.array(
    z.object({
      id: z.string(),
      tool: z.string(),
      status: z.string(),
      round: z.number().int(),
      reason: z.string().optional(),
      args: z.unknown().optional().describe("The arguments the call runs (or ran) with"),
      original_args: z.unknown().optional().describe("Set when a person edited the arguments at approval: what the model asked for"),
      edited: z.boolean().optional().describe("True when a person edited the arguments at approval"),
    }),
  ),
}).meta({ id: "TurnView" });
export type TurnView = z.infer<typeof TurnView>;

export const TurnSummary = TurnFigures.extend({
  first_message: z.string().optional().describe("The start of the first message the turn took (200 characters at most)"),
}).meta({ id: "TurnSummary" });
export type TurnSummary = z.infer<typeof TurnSummary>;

export const TurnListQuery = z.strictObject({
  limit: queryInteger(1, 200).default(50).describe("Turns per page (1-200)"),
  cursor: z.string().min(1).optional().describe("The `next` value of the previous page"),
});
export type TurnListQuery = z.input<typeof TurnListQuery>;

export const TurnList = z
  .object({
    turns: z.array(TurnSummary).describe("Newest first"),
    next: z.string().nullable().describe("Pass as `cursor` for the next (older) page; null on the last page"),
  })
  .meta({ id: "TurnList" });
export type TurnList = z.infer<typeof TurnList>;
