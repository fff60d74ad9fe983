import { readFileSync } from "node:fs";
import { z } from "zod";
import { ConfigError, parseYamlSource } from "../../config/yaml-source.js";
import { readWithSchema } from "../../config/read-with-schema.js";

/**
 * An eval suite file (`wardrik eval SUITE.yaml`): an agent and its cases,
 * each a new message (with scripted tool results) or a recorded turn, with
 * what the replayed turn is expected to do. Checked with zod; a mistake is
 * reported with the file, the line and the key, as config.yaml's are.
 */

/** `/pattern/flags` is a regular expression; any other string is text to find. */
export const SLASHED = /^\/(.*)\/([dgimsuvy]*)$/s;

/** A string that is text to find, or a `/pattern/` that must compile. */
const textOrPattern = () =>
  z.string().superRefine((value, ctx) => {
    const m = SLASHED.exec(value);
    if (!m) return;
    try {
      new RegExp(m[1]!, m[2]);
    } catch (err) {
      ctx.addIssue({ code: "custom", message: `is not a valid regular expression: ${(err as Error).message}` });
    }
  });

const nonEmpty = () => z.string().min(1, { error: "must not be empty" });

const ExpectedCall = z.strictObject({
  tool: nonEmpty(),
  /** A JSON subset of the call's arguments; any string in it may be a /pattern/. */
  args: z.unknown().optional(),
});

const Expect = z.strictObject({
  reply: textOrPattern().optional(),
  calls: z.array(ExpectedCall).optional(),
  not_called: z.array(nonEmpty()).optional(),
  judge: z.union([nonEmpty(), z.array(nonEmpty()).min(1)]).optional(),
  max_cost_usd: z.number().nonnegative({ error: "must be a number >= 0" }).optional(),
  max_iterations: z.number().int().positive({ error: "must be a positive integer" }).optional(),
  status: z.enum(["completed", "failed", "cancelled", "would_ask"]).optional(),
});

const Case = z
  .strictObject({
    name: nonEmpty(),
    message: nonEmpty().optional(),
    tools: z.record(nonEmpty(), z.unknown()).optional(),
    from: z
      .strictObject({ conversation: nonEmpty(), turn: z.number().int().positive({ error: "must be a turn number from 1" }) })
      .optional(),
    model: nonEmpty().optional(),
    expect: Expect,
  })
  .superRefine((c, ctx) => {
    if ((c.message === undefined) === (c.from === undefined)) {
      ctx.addIssue({ code: "custom", message: "needs one of message (a new turn) or from (a recorded turn)" });
    }
    if (c.tools !== undefined && c.from !== undefined) {
      ctx.addIssue({ code: "custom", path: ["tools"], message: "goes with message; a recorded turn's tools answer from the record" });
    }
  });

const Suite = z
  .strictObject({
    agent: nonEmpty(),
    model: nonEmpty().optional(),
    judge_model: nonEmpty().optional(),
    live: z.array(nonEmpty()).optional(),
    cases: z.array(Case).min(1),
  })
  .superRefine((s, ctx) => {
    const seen = new Set<string>();
    for (const [i, c] of s.cases.entries()) {
      if (seen.has(c.name)) ctx.addIssue({ code: "custom", path: ["cases", i, "name"], message: `repeats the case name "${c.name}"` });
      seen.add(c.name);
    }
  });

export type EvalSuite = z.output<typeof Suite>;
export type EvalCase = EvalSuite["cases"][number];
export type EvalExpect = EvalCase["expect"];

/** Parses a suite's text; `file` is how errors name it. Throws a ConfigError (`suite.yaml:7: cases[1].expect.reply ...`). */
export function parseSuite(text: string, file: string): EvalSuite {
  const src = parseYamlSource(text, file);
  if (src.value === null || src.value === undefined) {
    throw new ConfigError({ file, line: 1, detail: "the file is empty; a suite is a map of agent and cases" });
  }
  return readWithSchema(Suite, src);
}

export function readSuite(path: string): EvalSuite {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (e) {
    throw new ConfigError({ file: path, detail: `cannot be read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})` });
  }
  return parseSuite(text, path);
}
