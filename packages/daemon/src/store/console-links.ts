import type { Db } from "./db.js";

/**
 * One-time sign-in links of the web console (`console_links`, 006_console.sql).
 * A row holds the hash of a link's code and the token sealed under a key only
 * the code gives; using a link deletes its row, so it works once.
 */
export class ConsoleLinksTable {
  constructor(private readonly db: Db) {}

  /** Keeps a new link until `expiresAt`, and sweeps links that expired unused. */
  async add(codeHash: string, sealedToken: string, expiresAt: string, now: string): Promise<void> {
    await this.db.transaction(async (tx) => {
      await tx.run("DELETE FROM console_links WHERE expires_at <= ?", [now]);
      await tx.run("INSERT INTO console_links (code_hash, sealed_token, expires_at, created_at) VALUES (?, ?, ?, ?)", [
        codeHash,
        sealedToken,
        expiresAt,
        now,
      ]);
    });
  }

  /**
   * Takes the link with this code hash: it is gone afterwards, whether it was
   * still valid or not. Undefined when there is none or it expired; of two
   * requests with one code, only one gets it.
   */
  async take(codeHash: string, now: string): Promise<string | undefined> {
    const row = await this.db.transaction((tx) =>
      tx.get<{ sealed_token: string; expires_at: string }>(
        "DELETE FROM console_links WHERE code_hash = ? RETURNING sealed_token, expires_at",
        [codeHash],
      ),
    );
    return row && row.expires_at > now ? row.sealed_token : undefined;
  }
}
