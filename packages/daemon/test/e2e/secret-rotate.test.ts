/**
 * `wardrik secret rotate-key`, the real CLI against a real project and a
 * running daemon: every secret (one written by the first release's format
 * too) moves to a new key, the old key leaves the key file, the running
 * daemon stores new secrets under the new key, and a restart still resolves
 * them all. With WARDRIK_SECRET_KEY, secrets move to the environment's key
 * and daemons started with it read them.
 */
import { createCipheriv, randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { projectDatabaseUrl } from "../helpers/database-contents.js";
import { withSideConnection } from "../helpers/side-connection.js";
import { describe, expect, it } from "vitest";
import { keyId } from "../../src/secrets/key-ring.js";
import { createProject, type TestProject } from "../helpers/spawn-daemon.js";

function keyFileIds(p: TestProject): string[] {
  return p
    .read(".wardrik/secret-key")
    .split("\n")
    .filter((l) => l.trim() && !l.startsWith("#"))
    .map((l) => keyId(Buffer.from(l.trim(), "base64")));
}

function rows(p: TestProject): Promise<{ name: string; ciphertext: string }[]> {
  return withSideConnection(projectDatabaseUrl(p.dir, p.read("config.yaml")), (db) =>
    db.all<{ name: string; ciphertext: string }>("SELECT name, ciphertext FROM secrets ORDER BY name"),
  );
}

/** Adds a row the way the first release wrote it: IV.TAG.BODY under the key file's key, no key ID. */
async function addLegacyRow(p: TestProject, name: string, value: string): Promise<void> {
  const key = Buffer.from(readFileSync(join(p.dir, ".wardrik", "secret-key"), "utf8").trim(), "base64");
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", key, iv);
  const body = Buffer.concat([cipher.update(value, "utf8"), cipher.final()]);
  const sealed = [iv, cipher.getAuthTag(), body].map((b) => b.toString("base64")).join(".");
  await withSideConnection(projectDatabaseUrl(p.dir, p.read("config.yaml")), (db) =>
    db.run("INSERT INTO secrets (org, name, ciphertext, updated_at) VALUES (?, ?, ?, ?)", [
      "default",
      name,
      sealed,
      new Date().toISOString(),
    ]),
  );
}

/** config.yaml with an MCP server entry whose env uses each secret: the daemon only starts when all resolve. */
function useSecrets(p: TestProject, names: string[]): void {
  const env = names.map((n) => `      ${n}: \${secret:${n}}`).join("\n");
  p.write("config.yaml", `${p.read("config.yaml")}\nmcp:\n  uses:\n    command: ${JSON.stringify(process.execPath)}\n    env:\n${env}\n`);
}

describe("wardrik secret rotate-key", () => {
  it("moves every secret to a new key while the daemon runs; the old key leaves the key file", async () => {
    const p = await createProject();
    expect((await p.api("POST", "/v1/secrets/FIRST", { value: "first-value-123" })).status).toBeLessThan(300);
    await addLegacyRow(p, "LEGACY", "legacy-value-123");
    const [oldId] = keyFileIds(p);

    const r = await p.cli(["secret", "rotate-key", "--json"]);
    expect(r.code, r.stderr).toBe(0);
    const result = JSON.parse(r.stdout) as { keyId: string; rotated: number; retired: string[]; failed: unknown[] };
    expect(result).toMatchObject({ rotated: 2, retired: [oldId], failed: [] });
    expect(result.keyId).not.toBe(oldId);
    expect(keyFileIds(p)).toEqual([result.keyId]);

    // The running daemon rereads the key file: a secret stored now uses the new key.
    expect((await p.api("POST", "/v1/secrets/SECOND", { value: "second-value-123" })).status).toBeLessThan(300);
    for (const row of await rows(p)) expect(row.ciphertext.startsWith(`v2.${result.keyId}.`), row.name).toBe(true);

    const text = await p.cli(["secret", "rotate-key"]);
    expect(text.code, text.stderr).toBe(0);
    expect(text.stdout).toMatch(
      /^Re-encrypted 3 secrets under key k[0-9a-f]{12} \(.*secret-key\)\.\nRemoved the old key k[0-9a-f]{12} from the key file\.\n$/,
    );

    await p.stop();
    useSecrets(p, ["FIRST", "LEGACY", "SECOND"]);
    await p.start();
  });

  it("with WARDRIK_SECRET_KEY, moves every secret to that key; daemons started with it read them", async () => {
    const daemonEnv: Record<string, string> = {};
    const p = await createProject({ env: daemonEnv });
    expect((await p.api("POST", "/v1/secrets/FIRST", { value: "first-value-123" })).status).toBeLessThan(300);
    const key = randomBytes(32).toString("base64");

    const r = await p.cli(["secret", "rotate-key"], { env: { WARDRIK_SECRET_KEY: key } });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`Re-encrypted 1 secret under key ${keyId(Buffer.from(key, "base64"))} (WARDRIK_SECRET_KEY).`);
    expect(r.stdout).toContain("remove the old ones from WARDRIK_SECRET_KEY_PREVIOUS and .wardrik/secret-key");

    await p.stop();
    useSecrets(p, ["FIRST"]);
    p.remove(".wardrik/secret-key");
    daemonEnv.WARDRIK_SECRET_KEY = key;
    await p.start();
  });

  it("says what is wrong with a WARDRIK_SECRET_KEY that is not a 32-byte base64 key", async () => {
    const p = await createProject({ start: false });
    const r = await p.cli(["secret", "rotate-key"], { env: { WARDRIK_SECRET_KEY: "too-short" } });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("WARDRIK_SECRET_KEY: the key is 6 bytes; AES-256 needs 32");
  });
});
