/**
 * A short seeded pass of the fuzz suite (`npm run fuzz` runs longer ones):
 * a real daemon takes a few seconds of generated requests on every surface
 * (OpenAPI routes, worker frames, the MCP endpoint, Slack, inbound webhooks)
 * and must answer every one: no 5xx, no dropped connection, no death.
 */
import { describe, expect, it } from "vitest";
import { crashed, runFuzz } from "./run-fuzz.js";

describe("fuzzing a real daemon", () => {
  it("answers a seeded pass of generated requests on every surface without a crash", { timeout: 120_000 }, async () => {
    const report = await runFuzz({ seconds: 6, seed: 20_261_204 });
    expect(report.exchanges).toBeGreaterThan(0);
    expect(Object.keys(report.by_target).sort()).toEqual(["http-routes", "mcp-endpoint", "slack", "webhooks", "worker-protocol"]);
    expect(crashed(report), JSON.stringify(report.crashes, null, 2)).toBe(false);
  });
});
