/**
 * The vault of MCP OAuth grants on either database: sealed under the secrets'
 * key ring, bound to org and server, never plain text in a row, replaced in
 * place, removed, and moved to a new key by a rotation.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { Db } from "../../src/store/db.js";
import { McpGrantStore } from "../../src/store/mcp-grants.js";
import { openDb } from "../../src/store/open-db.js";
import { SecretStore } from "../../src/store/secrets.js";
import { createTestDatabase } from "../helpers/test-database.js";

const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f();
});

const KEY_A = Buffer.alloc(32, 1).toString("base64");
const KEY_B = Buffer.alloc(32, 2).toString("base64");

async function vault(): Promise<{ db: Db; grants: (env: NodeJS.ProcessEnv) => McpGrantStore }> {
  const dir = mkdtempSync(join(tmpdir(), "wardrik-grants-"));
  const database = await createTestDatabase();
  const db = await openDb(database.url);
  cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
  cleanup.push(() => db.close());
  return { db, grants: (env) => new McpGrantStore(db, new SecretStore(db, join(dir, "secret-key"), { env })) };
}

const rows = (db: Db) => db.all<{ org: string; server: string; ciphertext: string }>("SELECT org, server, ciphertext FROM mcp_grants");

describe("MCP grant vault", () => {
  it("keeps one sealed document per org and server; the row never holds the tokens", async () => {
    const { db, grants } = await vault();
    const g = grants({ WARDRIK_SECRET_KEY: KEY_A });
    const doc = JSON.stringify({ tokens: { access_token: "at_secret_value_1", refresh_token: "rt_secret_value_1" } });
    await g.put("acme", "linear", doc);
    await g.put("globex", "linear", "other");
    expect(await g.get("acme", "linear")).toBe(doc);
    expect(await g.get("globex", "linear")).toBe("other");
    expect(await g.get("acme", "github")).toBeUndefined();
    const stored = JSON.stringify(await rows(db));
    expect(stored).not.toContain("at_secret_value_1");
    expect(stored).not.toContain("rt_secret_value_1");

    // Replaced in place (a refresh), not added.
    await g.put("acme", "linear", "refreshed");
    expect(await g.get("acme", "linear")).toBe("refreshed");
    expect(await g.keys()).toEqual([
      { org: "acme", server: "linear" },
      { org: "globex", server: "linear" },
    ]);

    expect(await g.remove("acme", "linear")).toBe(true);
    expect(await g.remove("acme", "linear")).toBe(false);
    expect(await g.get("acme", "linear")).toBeUndefined();
  });

  it("a grant copied to another org or server does not open, and the error names no token", async () => {
    const { db, grants } = await vault();
    const g = grants({ WARDRIK_SECRET_KEY: KEY_A });
    await g.put("acme", "linear", "tok_acme_only");
    const [row] = await rows(db);
    await db.transaction((tx) =>
      tx.run("INSERT INTO mcp_grants (org, server, ciphertext, updated_at) VALUES (?, ?, ?, ?)", [
        "globex",
        "linear",
        row!.ciphertext,
        "now",
      ]),
    );
    const err = await g.get("globex", "linear").then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    expect(err?.message).toMatch(/the OAuth grant of org globex for MCP server linear cannot be decrypted/);
    expect(err?.message).not.toContain("tok_acme_only");
    const everything = await g.everything();
    expect(everything.grants).toEqual([{ org: "acme", server: "linear", document: "tok_acme_only" }]);
    expect(everything.unreadable.map((u) => u.org)).toEqual(["globex"]);
  });

  it("a rotation re-seals every grant under the new key; the old key alone no longer opens them", async () => {
    const { db, grants } = await vault();
    await grants({ WARDRIK_SECRET_KEY: KEY_A }).put("acme", "linear", "doc");
    const rotated = grants({ WARDRIK_SECRET_KEY: KEY_B, WARDRIK_SECRET_KEY_PREVIOUS: KEY_A });
    expect(await rotated.notUnderCurrentKey()).toBe(1);
    expect(await rotated.rotate()).toEqual({ rotated: 1, failed: [] });
    expect(await rotated.notUnderCurrentKey()).toBe(0);
    expect(await grants({ WARDRIK_SECRET_KEY: KEY_B }).get("acme", "linear")).toBe("doc");
    await expect(grants({ WARDRIK_SECRET_KEY: KEY_A }).get("acme", "linear")).rejects.toThrow(/not among this daemon's keys/);
    expect((await rows(db)).length).toBe(1);
  });
});
