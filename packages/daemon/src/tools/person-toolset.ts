import type { ToolCallContext, ToolInfo, ToolOutcome, ToolScope, Toolset } from "./toolset.js";

/** The full name of the built-in tool that asks a person a question. */
export const ASK_PERSON_TOOL = "person/ask";

const MAX_QUESTION = 4000;
const MAX_CHOICES = 20;
const MAX_CHOICE = 200;
/** Longest answer a person may give (characters). */
export const MAX_ANSWER = 10_000;

const TOOLS: ToolInfo[] = [
  {
    name: ASK_PERSON_TOOL,
    description:
      "Ask a person a question and wait for their answer (it may take hours). Give choices when the answer must be one of a few; " +
      "the result is { answer }.",
    inputSchema: {
      type: "object",
      properties: {
        question: { type: "string", description: "The question, as the person will read it" },
        choices: {
          type: "array",
          items: { type: "string" },
          description: "The answers the person may pick from; without it, any text",
        },
      },
      required: ["question"],
      additionalProperties: false,
    },
    // Asking changes nothing: a policy allows it like a read unless a rule says otherwise.
    readOnly: true,
    idempotent: true,
  },
];

/** A person/ask call's arguments once checked. */
export interface Question {
  question: string;
  choices?: string[] | undefined;
}

/** The question a call's arguments ask, or what is wrong with them (told to the model). */
export function readQuestion(args: unknown): Question | { error: string } {
  const a = args as Record<string, unknown> | null;
  if (typeof a !== "object" || a === null || Array.isArray(a)) return { error: "arguments must be an object { question, choices? }" };
  const extra = Object.keys(a).filter((k) => k !== "question" && k !== "choices");
  if (extra.length > 0) return { error: `unknown argument ${extra[0]}; person/ask takes question and choices` };
  if (typeof a.question !== "string" || a.question.trim() === "") return { error: "question must be a non-empty string" };
  if (a.question.length > MAX_QUESTION) return { error: `question is longer than ${MAX_QUESTION} characters` };
  if (a.choices === undefined) return { question: a.question };
  if (!Array.isArray(a.choices) || a.choices.length === 0 || a.choices.length > MAX_CHOICES)
    return { error: `choices must be a list of 1 to ${MAX_CHOICES} strings` };
  const choices: string[] = [];
  for (const [i, c] of a.choices.entries()) {
    if (typeof c !== "string" || c.trim() === "" || c.length > MAX_CHOICE)
      return { error: `choices[${i}] must be a non-empty string of at most ${MAX_CHOICE} characters` };
    if (choices.includes(c)) return { error: `choices[${i}] repeats "${c}"` };
    choices.push(c);
  }
  return { question: a.question, choices };
}

/**
 * The built-in `person` namespace: `person/ask` puts a question to a person.
 * Its calls never run here: the runtime parks the turn with the question
 * (the call waits, as for an approval) and a person's answer completes it.
 */
export class PersonToolset implements Toolset {
  readonly namespace = "person";
  readonly kind = "person" as const;

  list(_scope: ToolScope): ToolInfo[] {
    return TOOLS;
  }

  call(tool: string, _args: unknown, _ctx: ToolCallContext): Promise<ToolOutcome> {
    // Reached only if a caller bypassed the runtime (the runtime asks the person instead).
    return Promise.resolve({ ok: false, kind: "failed", error: `person/${tool} is answered by a person, not run` });
  }
}
