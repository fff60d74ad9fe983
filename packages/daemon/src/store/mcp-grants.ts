import type { Db } from "./db.js";
import type { RotationResult, SecretStore } from "./secrets.js";

/** The sealing kind of grants: a grant's ciphertext never opens as a secret, nor a secret's as a grant. */
const KIND = "mcp-grant";

export interface GrantKey {
  org: string;
  server: string;
}

/**
 * The vault of OAuth grants for remote MCP servers: one sealed document per
 * org and server (client registration, tokens, a login in progress). The
 * document is opaque here (JSON text the OAuth layer writes); it is sealed
 * with the secrets' key ring (AES-256-GCM) and bound to its org and server,
 * so the database alone reveals no token and a row copied elsewhere does not
 * open.
 */
export class McpGrantStore {
  constructor(
    private readonly db: Db,
    private readonly secrets: SecretStore,
  ) {}

  /** The grant's document, or undefined when there is none; throws when it cannot be opened. */
  async get(org: string, server: string): Promise<string | undefined> {
    const row = await this.db.get<{ ciphertext: string }>("SELECT ciphertext FROM mcp_grants WHERE org = ? AND server = ?", [org, server]);
    return row ? this.open(org, server, row.ciphertext) : undefined;
  }

  async put(org: string, server: string, document: string): Promise<void> {
    const sealed = this.secrets.seal(KIND, org, server, document);
    await this.db.transaction((tx) =>
      tx.run(
        "INSERT INTO mcp_grants (org, server, ciphertext, updated_at) VALUES (?, ?, ?, ?) ON CONFLICT (org, server) DO UPDATE SET ciphertext = excluded.ciphertext, updated_at = excluded.updated_at",
        [org, server, sealed, new Date().toISOString()],
      ),
    );
  }

  /** Removes the grant; false when there was none. */
  async remove(org: string, server: string): Promise<boolean> {
    const { changes } = await this.db.transaction((tx) => tx.run("DELETE FROM mcp_grants WHERE org = ? AND server = ?", [org, server]));
    return changes > 0;
  }

  /** Which org holds a grant for which server (nothing is decrypted). */
  async keys(): Promise<GrantKey[]> {
    return this.db.all<{ org: string; server: string }>("SELECT org, server FROM mcp_grants ORDER BY org, server");
  }

  /** Every grant that opens, and those that do not (with why): the daemon blanks their tokens from what it records. */
  async everything(): Promise<{ grants: (GrantKey & { document: string })[]; unreadable: (GrantKey & { error: string })[] }> {
    const rows = await this.db.all<{ org: string; server: string; ciphertext: string }>("SELECT org, server, ciphertext FROM mcp_grants");
    const grants: (GrantKey & { document: string })[] = [];
    const unreadable: (GrantKey & { error: string })[] = [];
    for (const r of rows) {
      try {
        grants.push({ org: r.org, server: r.server, document: this.open(r.org, r.server, r.ciphertext) });
      } catch (err) {
        unreadable.push({ org: r.org, server: r.server, error: (err as Error).message });
      }
    }
    return { grants, unreadable };
  }

  /** Re-seals every grant not under the current key (`wardrik secret rotate-key`); a row changed meanwhile is left alone. */
  async rotate(): Promise<RotationResult> {
    const rows = await this.db.all<{ org: string; server: string; ciphertext: string }>(
      "SELECT org, server, ciphertext FROM mcp_grants WHERE ciphertext NOT LIKE ?",
      [`${this.secrets.currentPrefix}%`],
    );
    const result: RotationResult = { rotated: 0, failed: [] };
    for (const r of rows) {
      let document: string;
      try {
        document = this.open(r.org, r.server, r.ciphertext);
      } catch (err) {
        result.failed.push({ org: r.org, name: `mcp grant ${r.server}`, error: (err as Error).message });
        continue;
      }
      const sealed = this.secrets.seal(KIND, r.org, r.server, document);
      const { changes } = await this.db.transaction((tx) =>
        tx.run("UPDATE mcp_grants SET ciphertext = ?, updated_at = ? WHERE org = ? AND server = ? AND ciphertext = ?", [
          sealed,
          new Date().toISOString(),
          r.org,
          r.server,
          r.ciphertext,
        ]),
      );
      result.rotated += changes;
    }
    return result;
  }

  /** How many grants are not under the current key. */
  async notUnderCurrentKey(): Promise<number> {
    const row = await this.db.get<{ n: number }>("SELECT COUNT(*) AS n FROM mcp_grants WHERE ciphertext NOT LIKE ?", [
      `${this.secrets.currentPrefix}%`,
    ]);
    return Number(row?.n ?? 0);
  }

  private open(org: string, server: string, ciphertext: string): string {
    return this.secrets.unseal(KIND, org, server, ciphertext, `the OAuth grant of org ${org} for MCP server ${server}`);
  }
}
