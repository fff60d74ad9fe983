import { describe, expect, it } from "vitest";
import * as protocol from "@wardrik/protocol";
import * as sdk from "@wardrik/sdk";
import * as daemon from "../src/index.js";

// The public surface of each package is chosen by name; these pin it so a change is deliberate.
describe("export maps", () => {
  it("wardrik (daemon)", () => {
    expect(Object.keys(daemon).sort()).toEqual([
      "ADMIN_TOKEN_FILE",
      "CallStopper",
      "EventBus",
      "EventsIO",
      "FilesToolset",
      "LOST_ANSWER",
      "McpToolset",
      "PostgresDb",
      "Runtime",
      "SqliteDb",
      "Store",
      "ToolRegistry",
      "WardrikMetrics",
      "WorkerGateway",
      "compilePolicy",
      "decide",
      "ensureAdminToken",
      "initProject",
      "openDb",
      "startDaemon",
      "startDaemonTelemetry",
      "systemClock",
      "ulidIds",
      "withStopSignal",
    ]);
  });

  it("@wardrik/sdk", () => {
    expect(Object.keys(sdk).sort()).toEqual([
      "DEFAULT_FINISHED_CALLS_FILE",
      "DEFAULT_IDEMPOTENCY_DIR",
      "FileFinishedCalls",
      "FileIdempotencyStore",
      "MemoryFinishedCalls",
      "MemoryIdempotencyStore",
      "NoAnswerError",
      "Wardrik",
      "WardrikClient",
      "defineTool",
      "invokeTool",
      "isNoAnswer",
      "readSse",
      "remember",
      "withIdempotency",
    ]);
  });

  it("@wardrik/protocol has no deep internals", () => {
    const names = Object.keys(protocol);
    expect(names).toContain("WardrikError");
    expect(names).toContain("EVENT_TYPES");
    expect(names).toContain("WORKER_PROTOCOL_VERSION");
    expect(names.every((n) => !n.startsWith("_"))).toBe(true);
  });
});
