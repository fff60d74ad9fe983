/**
 * Secrets at rest: bound to their org and name, keys from the key file or
 * WARDRIK_SECRET_KEY with an ID in each ciphertext, the first release's rows
 * still readable, and `rotateSecretKey` moving everything to a new key while
 * a running daemon's store keeps working.
 */
import { createCipheriv, randomBytes } from "node:crypto";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { initProject } from "../../src/cli/init-project.js";
import { keyId, readKeyFile } from "../../src/secrets/key-ring.js";
import { rotateSecretKey } from "../../src/secrets/rotate-key.js";
import type { Db } from "../../src/store/db.js";
import { openDb } from "../../src/store/open-db.js";
import { SecretStore } from "../../src/store/secrets.js";
import { createTestDatabase, TEST_DIALECT } from "../helpers/test-database.js";

const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const f of cleanup.splice(0).reverse()) await f();
});

interface Project {
  dir: string;
  keyPath: string;
  db: Db;
  store(env?: NodeJS.ProcessEnv): SecretStore;
  rows(): Promise<{ org: string; name: string; ciphertext: string }[]>;
}

/** A project whose config.yaml names a fresh database of this run's dialect. */
async function project(): Promise<Project> {
  const base = mkdtempSync(join(tmpdir(), "wardrik-secret-store-"));
  const dir = join(base, "p");
  initProject(dir);
  const database = await createTestDatabase();
  writeFileSync(
    join(dir, "config.yaml"),
    readFileSync(join(dir, "config.yaml"), "utf8").replace(/^database:.*$/m, `database: ${database.url}`),
  );
  const db = await openDb(database.url);
  cleanup.push(() => rmSync(base, { recursive: true, force: true }));
  cleanup.push(() => db.close());
  const keyPath = join(dir, ".wardrik", "secret-key");
  return {
    dir,
    keyPath,
    db,
    store: (env = {}) => new SecretStore(db, keyPath, { env }),
    rows: () => db.all<{ org: string; name: string; ciphertext: string }>("SELECT org, name, ciphertext FROM secrets ORDER BY org, name"),
  };
}

/** A row as the first release wrote it: IV.TAG.BODY under the key file's key, no key ID, no additional data. */
function legacySeal(key: Buffer, value: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", key, iv);
  const body = Buffer.concat([cipher.update(value, "utf8"), cipher.final()]);
  return [iv, cipher.getAuthTag(), body].map((b) => b.toString("base64")).join(".");
}

/** Copies a row's ciphertext, as is, to another org and name. */
async function copyRow(p: Project, from: { org: string; name: string }, to: { org: string; name: string }): Promise<void> {
  const row = (await p.db.get<{ ciphertext: string }>("SELECT ciphertext FROM secrets WHERE org = ? AND name = ?", [from.org, from.name]))!;
  await insertRow(p, to.org, to.name, row.ciphertext);
}

const insertRow = (p: Project, org: string, name: string, ciphertext: string) =>
  p.db.transaction((tx) =>
    tx.run("INSERT INTO secrets (org, name, ciphertext, updated_at) VALUES (?, ?, ?, ?)", [
      org,
      name,
      ciphertext,
      new Date().toISOString(),
    ]),
  );

describe(`SecretStore on ${TEST_DIALECT}`, () => {
  it("binds a ciphertext to its org and name: copied to another row, it does not decrypt", async () => {
    const p = await project();
    const s = p.store();
    await s.set("acme", "STRIPE_KEY", "sk_live_acme_123456");
    await copyRow(p, { org: "acme", name: "STRIPE_KEY" }, { org: "acme", name: "OTHER" });
    await copyRow(p, { org: "acme", name: "STRIPE_KEY" }, { org: "rival", name: "STRIPE_KEY" });
    expect(await s.get("acme", "STRIPE_KEY")).toBe("sk_live_acme_123456");
    await expect(s.get("acme", "OTHER")).rejects.toThrow(
      "secret OTHER cannot be decrypted: its stored value was not written for org acme and name OTHER",
    );
    await expect(s.get("rival", "STRIPE_KEY")).rejects.toThrow(/not written for org rival and name STRIPE_KEY/);
    const { values, unreadable } = await s.everything();
    expect(values.map((v) => `${v.org}/${v.name}`)).toEqual(["acme/STRIPE_KEY"]);
    expect(unreadable.map((v) => `${v.org}/${v.name}`).sort()).toEqual(["acme/OTHER", "rival/STRIPE_KEY"]);
    // One org's view: the row that does not decrypt spoils nothing else, and says why by name.
    const acme = await s.readable("acme");
    expect([...acme.values.keys()]).toEqual(["STRIPE_KEY"]);
    expect([...acme.unreadable]).toEqual([["OTHER", expect.stringMatching(/^secret OTHER cannot be decrypted/)]]);
    expect(await s.list("acme")).toEqual([
      { name: "OTHER", error: expect.stringMatching(/^secret OTHER cannot be decrypted/) },
      { name: "STRIPE_KEY" },
    ]);
  });

  it("stores the key's ID with each ciphertext, and reads rows the first release wrote", async () => {
    const p = await project();
    const s = p.store();
    const [fileKey] = readKeyFile(p.keyPath);
    await s.set("default", "NEW", "new-format-value");
    await insertRow(p, "default", "OLD", legacySeal(fileKey!.key, "old-format-value"));
    const rows = await p.rows();
    expect(rows.find((r) => r.name === "NEW")!.ciphertext.startsWith(`v2.${keyId(fileKey!.key)}.`)).toBe(true);
    expect(await s.get("default", "OLD")).toBe("old-format-value");
    expect(await s.readable("default")).toEqual({
      values: new Map([
        ["NEW", "new-format-value"],
        ["OLD", "old-format-value"],
      ]),
      unreadable: new Map(),
    });
  });

  it("takes the key from WARDRIK_SECRET_KEY (no key file), and says which key a row needs when it is missing", async () => {
    const p = await project();
    const key = randomBytes(32);
    const env = { WARDRIK_SECRET_KEY: key.toString("base64") };
    const s = p.store(env);
    await s.set("default", "API", "value-under-env-key");
    expect(existsSync(p.keyPath)).toBe(false);
    expect((await p.rows())[0]!.ciphertext.startsWith(`v2.${keyId(key)}.`)).toBe(true);
    expect(await p.store(env).get("default", "API")).toBe("value-under-env-key");

    const other = p.store({ WARDRIK_SECRET_KEY: randomBytes(32).toString("base64") });
    await expect(other.get("default", "API")).rejects.toThrow(`secret API was encrypted with key ${keyId(key)}, which is not among`);
    // The old key, given as a previous key, still reads it.
    const both = p.store({ WARDRIK_SECRET_KEY: randomBytes(32).toString("base64"), WARDRIK_SECRET_KEY_PREVIOUS: key.toString("base64") });
    expect(await both.get("default", "API")).toBe("value-under-env-key");

    expect(() => p.store({ WARDRIK_SECRET_KEY: "c2hvcnQ=" })).toThrow("WARDRIK_SECRET_KEY: the key is 5 bytes; AES-256 needs 32");
    expect(() => p.store({ WARDRIK_SECRET_KEY: "not base64!" })).toThrow("WARDRIK_SECRET_KEY: not base64");
  });
});

describe(`rotateSecretKey on ${TEST_DIALECT}`, () => {
  it("re-encrypts every secret under a new key file key; a running store keeps reading and writes with the new key", async () => {
    const p = await project();
    const running = p.store();
    const [oldKey] = readKeyFile(p.keyPath);
    await running.set("default", "A", "value-a-123456");
    await running.set("acme", "B", "value-b-123456");
    await insertRow(p, "default", "LEGACY", legacySeal(oldKey!.key, "value-legacy-1"));

    const r = await rotateSecretKey(p.dir, {});
    expect(r.rotated).toBe(3);
    expect(r.failed).toEqual([]);
    expect(r.retired).toEqual([oldKey!.id]);
    const keys = readKeyFile(p.keyPath);
    expect(keys.map((k) => k.id)).toEqual([r.keyId]);
    expect(r.keyId).not.toBe(oldKey!.id);
    for (const row of await p.rows()) expect(row.ciphertext.startsWith(`v2.${r.keyId}.`), row.name).toBe(true);
    expect(readFileSync(p.keyPath, "utf8")).not.toContain(oldKey!.key.toString("base64"));

    // The store opened before the rotation rereads the key file: it reads everything and writes with the new key.
    expect(await running.get("default", "LEGACY")).toBe("value-legacy-1");
    await running.set("default", "C", "value-c-123456");
    expect((await p.rows()).find((x) => x.name === "C")!.ciphertext.startsWith(`v2.${r.keyId}.`)).toBe(true);
    const fresh = p.store();
    expect(await fresh.get("acme", "B")).toBe("value-b-123456");
    expect(await fresh.get("default", "A")).toBe("value-a-123456");
  });

  it("with WARDRIK_SECRET_KEY, moves every secret from the key file's key to the environment's", async () => {
    const p = await project();
    await p.store().set("default", "A", "value-a-123456");
    const envKey = randomBytes(32);
    const env = { WARDRIK_SECRET_KEY: envKey.toString("base64") };
    const r = await rotateSecretKey(p.dir, env);
    expect(r).toMatchObject({ keyId: keyId(envKey), source: "WARDRIK_SECRET_KEY", rotated: 1, retired: [], failed: [] });
    rmSync(p.keyPath);
    expect(await p.store(env).get("default", "A")).toBe("value-a-123456");
  });

  it("keeps the old keys when a secret cannot be decrypted, and names it", async () => {
    const p = await project();
    const s = p.store();
    await s.set("default", "GOOD", "value-good-1234");
    await copyRow(p, { org: "default", name: "GOOD" }, { org: "default", name: "MOVED" });
    const [oldKey] = readKeyFile(p.keyPath);
    const r = await rotateSecretKey(p.dir, {});
    expect(r.rotated).toBe(1);
    expect(r.failed.map((f) => f.name)).toEqual(["MOVED"]);
    expect(r.retired).toEqual([]);
    expect(readKeyFile(p.keyPath).map((k) => k.id)).toEqual([r.keyId, oldKey!.id]);
  });
});
