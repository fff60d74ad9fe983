/**
 * A daemon that stops while its collector is unreachable loses the spans it
 * could not send, and stops anyway: the export failures are logged, not
 * thrown at the daemon's shutdown.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { EventBus } from "../../src/events/event-bus.js";
import { systemClock, ulidIds } from "../../src/ids.js";
import { startTracing } from "../../src/telemetry/start-tracing.js";
import { SqliteDb } from "../../src/store/sqlite-db.js";
import { Store } from "../../src/store/store.js";

/** A port nothing listens on (taken, then released). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

describe("tracing at shutdown", () => {
  it("resolves when spans cannot be exported (collector down, more batches than the exporter sends at once), and says so in the log", async () => {
    const dir = mkdtempSync(join(tmpdir(), "wardrik-tracing-shutdown-"));
    const db = new SqliteDb(join(dir, "state.db"));
    const bus = new EventBus();
    const lines: { level: string; msg: string }[] = [];
    const tracing = await startTracing(
      undefined,
      {
        OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${await closedPort()}`,
        // One span a request: 40 spans are 40 requests at shutdown, past the exporter's 30 at once.
        OTEL_BSP_MAX_EXPORT_BATCH_SIZE: "1",
        OTEL_BSP_EXPORT_TIMEOUT: "2000",
      },
      {
        store: new Store(db, bus, ulidIds(systemClock), systemClock),
        bus,
        log: (level, msg) => lines.push({ level, msg }),
        redact: (t) => t,
        version: "test",
      },
    );
    const turn = { run: "run_x", agentId: "ag_x", agentName: "a", agentDescription: "", org: "default", conversationId: "cv_x" };
    for (let i = 0; i < 40; i++) {
      const call = { ...turn, callId: `call_${i}`, tool: "t/x", description: "", decision: "allow", attempt: 1, args: {} };
      tracing.telemetry.toolCallEnded(tracing.telemetry.toolCallStarted(call), { ok: true, output: i });
    }
    await expect(tracing.shutdown()).resolves.toBeUndefined();
    expect(lines).toContainEqual({ level: "warn", msg: "OpenTelemetry: spans could not be exported at shutdown" });
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  });
});
