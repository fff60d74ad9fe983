/**
 * Asks a judge model to decide one tool call (`decision: judge` in a policy).
 * The answer is structured output (a JSON object with decision and reason);
 * a model error or an answer that is not such an object gives the rule's
 * `on_error` decision instead, with the problem on the record.
 */
import type { LanguageModelV3, LanguageModelV3Content } from "@ai-sdk/provider";
import { z } from "zod";
import { judgeSystemPrompt, judgeUserMessage, VERDICT_SCHEMA, type JudgeFacts } from "./judge-prompt.js";
import type { Decision, JudgeSpec } from "./types.js";

export interface JudgeRequest extends JudgeFacts {
  spec: JudgeSpec;
  model: LanguageModelV3;
  signal: AbortSignal;
}

export interface JudgeVerdict {
  decision: Decision;
  reason: string;
  usage: { input: number; output: number; cached: number };
  /** Why the judge's answer could not be used; `decision` is then the rule's on_error. */
  error?: string;
}

const verdictSchema = z.object({
  decision: z.enum(["allow", "deny", "ask"]),
  reason: z.string().regex(/\S/, { error: "must be a non-empty string" }),
});

/** Judge answers are short; a longer one is cut off and then fails to parse, which on_error covers. */
const MAX_OUTPUT_TOKENS = 1_000;

/** Throws only when `signal` aborted (the turn was cancelled or timed out); every other failure is a verdict. */
export async function judgeCall(req: JudgeRequest): Promise<JudgeVerdict> {
  let content: LanguageModelV3Content[];
  let usage = { input: 0, output: 0, cached: 0 };
  try {
    const result = await req.model.doGenerate({
      prompt: [
        { role: "system", content: judgeSystemPrompt(req.spec.prompt) },
        { role: "user", content: [{ type: "text", text: judgeUserMessage(req) }] },
      ],
      responseFormat: { type: "json", schema: VERDICT_SCHEMA, name: "verdict", description: "The judge's decision on a tool call." },
      maxOutputTokens: MAX_OUTPUT_TOKENS,
      temperature: 0,
      abortSignal: req.signal,
    });
    content = result.content;
    usage = {
      input: result.usage.inputTokens.total ?? 0,
      output: result.usage.outputTokens.total ?? 0,
      cached: result.usage.inputTokens.cacheRead ?? 0,
    };
  } catch (err) {
    if (req.signal.aborted) throw req.signal.reason ?? err;
    return failed(req.spec, `the judge's model failed: ${err instanceof Error ? err.message : String(err)}`, usage);
  }
  const parsed = readVerdict(content);
  if ("problem" in parsed) return failed(req.spec, parsed.problem, usage);
  return { ...parsed, usage };
}

function failed(spec: JudgeSpec, problem: string, usage: JudgeVerdict["usage"]): JudgeVerdict {
  return {
    decision: spec.on_error,
    reason: `The judge (${spec.model}) gave no usable verdict, so this call is ${spec.on_error === "ask" ? "left to a person" : "refused"}: ${problem}`,
    usage,
    error: problem,
  };
}

/** The verdict in a reply: its text (or, from providers that answer structured output with a tool call, that call's input). */
export function readVerdict(content: LanguageModelV3Content[]): { decision: Decision; reason: string } | { problem: string } {
  let text = content
    .filter((p) => p.type === "text")
    .map((p) => p.text)
    .join("")
    .trim();
  if (text === "") text = content.find((p) => p.type === "tool-call")?.input.trim() ?? "";
  if (text === "") return { problem: "the answer was empty" };
  // Some models wrap JSON in a Markdown fence even when asked for JSON only.
  const fenced = /^```(?:json)?\s*([\s\S]*?)\s*```$/.exec(text);
  if (fenced) text = fenced[1]!;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { problem: `the answer is not JSON: ${JSON.stringify(text.slice(0, 200))}` };
  }
  const result = verdictSchema.safeParse(value);
  if (!result.success) {
    const issue = result.error.issues[0]!;
    const where = issue.path.length > 0 ? issue.path.join(".") : "the answer";
    return { problem: `${where} ${issue.message} (expected {"decision": "allow" | "deny" | "ask", "reason": "..."})` };
  }
  return { decision: result.data.decision, reason: result.data.reason.trim() };
}
