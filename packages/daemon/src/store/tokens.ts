import { createHash } from "node:crypto";
import type { IdGenerator } from "../ids.js";
import type { Db } from "./db.js";

export function hashToken(token: string): string {
  return createHash("sha256").update(token).digest("hex");
}

/** Bearer tokens, stored as hashes, each belonging to one org. */
export class TokensTable {
  constructor(
    private readonly db: Db,
    private readonly ids: IdGenerator,
  ) {}

  async add(org: string, name: string, token: string, admin: boolean, now: string): Promise<void> {
    await this.db.transaction((tx) =>
      tx.run("INSERT INTO tokens (id, org, name, hash, admin, created_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (hash) DO NOTHING", [
        this.ids.next("token"),
        org,
        name,
        hashToken(token),
        admin ? 1 : 0,
        now,
      ]),
    );
  }

  /** The org and the name of a token (the name says who decided an approval). */
  async authenticate(token: string): Promise<{ org: string; admin: boolean; name: string } | undefined> {
    const row = await this.db.get<{ org: string; admin: number; name: string }>("SELECT org, admin, name FROM tokens WHERE hash = ?", [
      hashToken(token),
    ]);
    return row ? { org: row.org, admin: row.admin === 1, name: row.name } : undefined;
  }

  /** Every org the daemon knows of: those with a token or an agent (for the admin token's org switch). */
  async orgs(): Promise<string[]> {
    const rows = await this.db.all<{ org: string }>("SELECT org FROM tokens UNION SELECT org FROM agents ORDER BY org");
    return rows.map((r) => r.org);
  }
}
