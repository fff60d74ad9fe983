/**
 * The daemon's logger, writing into a stream we read back: pino's lines, most
 * of them written without loading pino (the same lines, byte for byte), the
 * rest by pino itself.
 */
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { createLogger, parseLogThreshold, resolveLogThreshold, type LoggerOptions } from "../../src/log/index.js";

function capture(options: LoggerOptions = {}) {
  const lines: string[] = [];
  const log = createLogger({ stream: { write: (line: string) => lines.push(line) }, ...options });
  return { log, lines, records: () => lines.map((l) => JSON.parse(l) as Record<string, unknown>) };
}

describe("createLogger", () => {
  it("writes one JSON object per line with level name, ISO time, message and fields", () => {
    const { log, lines, records } = capture();
    log("info", "daemon listening", { url: "http://127.0.0.1:1" });
    log("warn", "no fields");
    expect(lines.every((l) => l.endsWith("\n") && !l.slice(0, -1).includes("\n"))).toBe(true);
    const [first, second] = records();
    expect(first).toMatchObject({ level: "info", msg: "daemon listening", url: "http://127.0.0.1:1", pid: process.pid });
    expect(new Date(first!.time as string).toISOString()).toBe(first!.time);
    expect(second).toMatchObject({ level: "warn", msg: "no fields" });
  });

  it("drops lines below the threshold", () => {
    const at = (level: LoggerOptions["level"]) => {
      const { log, records } = capture({ level });
      for (const l of ["debug", "info", "warn", "error"] as const) log(l, l);
      return records().map((r) => r.level);
    };
    expect(at(undefined)).toEqual(["info", "warn", "error"]);
    expect(at("debug")).toEqual(["debug", "info", "warn", "error"]);
    expect(at("warn")).toEqual(["warn", "error"]);
    expect(at("error")).toEqual(["error"]);
    expect(at("silent")).toEqual([]);
  });

  it("serialises an error with its stack", () => {
    const { log, records } = capture();
    log("error", "failed", { err: new Error("boom") });
    expect(records()[0]).toMatchObject({ err: { type: "Error", message: "boom", stack: expect.stringContaining("boom") } });
  });

  it("writes the lines pino writes, byte for byte, whatever the fields hold", () => {
    const circular: Record<string, unknown> = { name: "loop" };
    circular.self = circular;
    const fieldSets: (Record<string, unknown> | undefined)[] = [
      undefined,
      {},
      { url: "http://127.0.0.1:1", org: "default", n: 3, ratio: 0.25, ok: true, off: false, none: null },
      { quote: 'say "hi"\n\ttab \\ back', unicode: "héllo ✓ \u2028 \u0001", empty: "", 'key "odd"': 1 },
      { nan: NaN, inf: Infinity, negInf: -Infinity, negZero: -0, big: 1e21, tiny: 1e-7 },
      { skipped: undefined, fn: () => 1, sym: Symbol("s"), kept: "yes" },
      { nested: { a: [1, "two", null, { b: undefined }], when: new Date(0) }, list: [], error: new Error("not err") },
      { msg: "a field named msg", level: "a field named level", pid: 0, time: "a field named time" },
      // Left to pino: its error serializer, a BigInt, a cycle.
      { err: new Error("boom"), org: "default" },
      { count: 10n },
      { circular },
    ];
    const message = 'listening on "x"\n%s %d';
    for (const fields of fieldSets) {
      const ours: string[] = [];
      const theirs: string[] = [];
      const log = createLogger({ level: "debug", stream: { write: (line: string) => ours.push(line) } });
      const real = pino(
        {
          level: "debug",
          formatters: { level: (label) => ({ level: label }) },
          timestamp: pino.stdTimeFunctions.isoTime,
          base: { pid: process.pid },
        },
        { write: (line: string) => theirs.push(line) },
      );
      for (const level of ["debug", "info", "warn", "error"] as const) {
        log(level, message, fields);
        if (fields === undefined) real[level](message);
        else real[level](fields, message);
      }
      const sameTime = (line: string) => line.replace(/"time":"[^"]*"/, '"time":"T"');
      expect(ours.map(sameTime), JSON.stringify(Object.keys(fields ?? {}))).toEqual(theirs.map(sameTime));
    }
  });

  it("passes each finished line through redact before writing it", () => {
    const { log, lines } = capture({ redact: (line) => line.replaceAll("sk-live-123", "[secret]") });
    log("info", "calling with sk-live-123", { header: "Bearer sk-live-123" });
    expect(lines.join("")).not.toContain("sk-live-123");
    expect(lines.join("")).toContain("[secret]");
  });

  it("writes readable lines, not JSON, for a terminal", () => {
    const lines: string[] = [];
    const log = createLogger({ stream: { write: (line: string) => lines.push(line), isTTY: true }, color: false });
    log("info", "wardrik daemon listening on http://127.0.0.1:7373 (org default)", { org: "default", note: "two words" });
    log("error", "request failed", { err: new Error("boom") });
    expect(lines[0]).toMatch(
      /^\d\d:\d\d:\d\d INFO  wardrik daemon listening on http:\/\/127\.0\.0\.1:7373 \(org default\) org=default note="two words"\n$/,
    );
    expect(lines[1]).toMatch(/^\d\d:\d\d:\d\d ERROR request failed\n {4}Error: boom\n {4}at /);
    expect(() => JSON.parse(lines[0]!)).toThrow();
  });

  it("colours the level on a terminal unless told not to", () => {
    const lines: string[] = [];
    const log = createLogger({ stream: { write: (line: string) => lines.push(line), isTTY: true }, color: true });
    log("warn", "careful");
    expect(lines[0]).toContain("\u001b[33mWARN \u001b[0m");
  });
});

describe("log level settings", () => {
  it("takes --log-level over WARDRIK_LOG_LEVEL over info", () => {
    expect(resolveLogThreshold(undefined, {})).toBe("info");
    expect(resolveLogThreshold(undefined, { WARDRIK_LOG_LEVEL: "DEBUG" })).toBe("debug");
    expect(resolveLogThreshold("error", { WARDRIK_LOG_LEVEL: "debug" })).toBe("error");
  });

  it("names the setting and the allowed levels for an unknown level", () => {
    expect(() => resolveLogThreshold(undefined, { WARDRIK_LOG_LEVEL: "loud" })).toThrow(
      'WARDRIK_LOG_LEVEL must be one of trace, debug, info, warn, error, fatal, silent (got "loud")',
    );
    expect(() => parseLogThreshold("verbose", "--log-level")).toThrow(/^--log-level must be one of /);
  });
});
