/**
 * The one-daemon lock of a SQLite file is taken on its real path: the file
 * named through a symlink, or a file not made yet in a symlinked folder, is
 * the same lock as the file itself.
 */
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { DatabaseLock, realDatabasePath } from "../../src/store/database-lock.js";

const held: DatabaseLock[] = [];
const dirs: string[] = [];
afterEach(() => {
  for (const l of held.splice(0)) l.release();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function folder(): string {
  const d = mkdtempSync(join(tmpdir(), "wardrik-lock-"));
  dirs.push(d);
  return d;
}

it("refuses a symlink to a locked database file, naming the real file", () => {
  const dir = folder();
  const real = join(dir, "wardrik.db");
  writeFileSync(real, "");
  symlinkSync(real, join(dir, "alias.db"));
  held.push(DatabaseLock.acquire(real));
  expect(() => DatabaseLock.acquire(join(dir, "alias.db"))).toThrow(
    /Another Wardrik daemon .* is using .*alias\.db \(which is .*wardrik\.db\)/,
  );
});

it("takes the lock of a database not made yet beside its folder's real path", () => {
  const dir = folder();
  mkdirSync(join(dir, "real"));
  symlinkSync(join(dir, "real"), join(dir, "linked"));
  expect(realDatabasePath(join(dir, "linked", "new.db"))).toBe(realDatabasePath(join(dir, "real", "new.db")));
  held.push(DatabaseLock.acquire(join(dir, "linked", "new.db")));
  expect(() => DatabaseLock.acquire(join(dir, "real", "new.db"))).toThrow(/Another Wardrik daemon/);
  held.splice(0).forEach((l) => l.release());
  // Released: the next one takes it.
  held.push(DatabaseLock.acquire(join(dir, "real", "new.db")));
});
