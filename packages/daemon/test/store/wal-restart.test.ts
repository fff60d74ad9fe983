/**
 * Under steady writes the SQLite WAL starts over instead of growing without
 * end: the background checkpoint, once the WAL passes its limit, checkpoints
 * in RESTART mode, and the file is cut back. Without that, a passive
 * checkpoint never caught the frames appended while it ran and the WAL of a
 * busy daemon grew by hundreds of megabytes. A real file, the real worker.
 */
import { existsSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { SqliteDb } from "../../src/store/sqlite-db.js";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

const walSize = (path: string) => (existsSync(`${path}-wal`) ? statSync(`${path}-wal`).size : 0);

describe("the SQLite WAL under steady writes", () => {
  it("starts over once past its limit, so its file stays small while far more is written", async () => {
    const dir = mkdtempSync(join(tmpdir(), "wardrik-wal-"));
    dirs.push(dir);
    const path = join(dir, "t.db");
    // A limit of 256 frames (about 1 MiB), so the test writes tens of megabytes, not hundreds.
    const db = new SqliteDb(path, { walRestartFrames: 256 });
    const content = "x".repeat(8192);
    let written = 0;
    let largest = 0;
    let shrank = false;
    const started = Date.now();
    try {
      // Commits one after the other, as a busy daemon's are (with a moment for other work every few), for at
      // least three checkpoint intervals.
      for (let i = 0; Date.now() - started < 3000 || written < 16 * 2 ** 20; i++) {
        await db.transaction((tx) =>
          tx.run("INSERT INTO files (agent_id, path, content, updated_at) VALUES ('a', ?, ?, 'now')", [`f${i}`, content]),
        );
        written += content.length;
        if (i % 10 === 0) {
          const size = walSize(path);
          if (size < largest) shrank = true;
          largest = Math.max(largest, size);
          await new Promise((r) => setTimeout(r, 1));
        }
      }
      expect(shrank, `the WAL never started over (largest ${largest} bytes for ${written} written)`).toBe(true);
      expect(walSize(path)).toBeLessThan(written / 2);
    } finally {
      await db.close();
    }
  });
});
