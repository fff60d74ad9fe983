/**
 * What an approval's events say about the decision, read defensively: `by`
 * (who decided) and the edited arguments are optional, and a daemon of
 * another version may word `by` as a name or as an object.
 */

/** Arguments a person changed before approving: what the call ran with, and what the model had asked for. */
export interface Edit {
  args: unknown;
  original: unknown;
}

/** Who approved or denied a call (a token's name, a Slack user), when the event says. */
export function decidedBy(data: Record<string, unknown>): string | undefined {
  const by = data.by;
  if (typeof by === "string") return by.trim() === "" ? undefined : by;
  if (typeof by === "object" && by !== null) {
    const o = by as Record<string, unknown>;
    for (const key of ["name", "user", "token", "id"]) {
      const v = o[key];
      if (typeof v === "string" && v.trim() !== "") return v;
    }
  }
  return undefined;
}

/** The edit an `approval.granted` records; undefined when the call ran with the model's own arguments. */
export function editOf(data: Record<string, unknown>): Edit | undefined {
  if (!("args" in data) || data.args === undefined) return undefined;
  return { args: data.args, original: data.original_args };
}
