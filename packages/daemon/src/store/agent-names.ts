import type { Tx } from "./db.js";

/** The names of these agents, read inside a transaction (which sees an agent it has just inserted). */
export async function agentNamesIn(tx: Tx, ids: readonly string[]): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  if (ids.length === 0) return out;
  const rows = await tx.all<{ id: string; name: string }>(
    `SELECT id, name FROM agents WHERE id IN (${ids.map(() => "?").join(", ")})`,
    ids,
  );
  for (const r of rows) out.set(r.id, r.name);
  return out;
}
