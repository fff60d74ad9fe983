/** The per-file cleanup registry the helpers use (packages/daemon/test/helpers/file-cleanups.ts). */
import { expect, it } from "vitest";
import { afterThisFile, runFileCleanups } from "../../packages/daemon/test/helpers/file-cleanups.js";

it("stops processes before it drops databases, the latest registered first within each", async () => {
  const order: string[] = [];
  afterThisFile(() => void order.push("db 1"), "databases");
  afterThisFile(() => void order.push("daemon 1"));
  afterThisFile(() => void order.push("db 2"), "databases");
  afterThisFile(async () => void order.push("daemon 2"), "processes");
  await runFileCleanups();
  expect(order).toEqual(["daemon 2", "daemon 1", "db 2", "db 1"]);
});

it("runs every cleanup when one fails, and runs each only once", async () => {
  const ran: string[] = [];
  afterThisFile(() => void ran.push("first"));
  afterThisFile(() => {
    throw new Error("already gone");
  });
  afterThisFile(() => Promise.reject(new Error("already gone")), "databases");
  afterThisFile(() => void ran.push("db"), "databases");
  await runFileCleanups();
  await runFileCleanups();
  expect(ran).toEqual(["first", "db"]);
});
