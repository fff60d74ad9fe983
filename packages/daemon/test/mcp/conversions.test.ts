import { describe, expect, it } from "vitest";
import { StderrTail } from "../../src/tools/mcp/stderr-tail.js";
import { displayUrl, redactorFor } from "../../src/tools/mcp/redact.js";
import { withStandIns } from "../../src/tools/mcp/stand-ins.js";
import { base64Bytes, toToolOutcome } from "../../src/tools/mcp/to-tool-outcome.js";
import { toToolInfo } from "../../src/tools/mcp/to-tool-info.js";

// The pure pieces: results, tool infos, redaction, the stderr ring.
describe("MCP conversions", () => {
  it("text only becomes a string; several text blocks join with newlines", () => {
    expect(toToolOutcome("s", "t", { content: [] })).toEqual({ ok: true, output: "" });
    expect(
      toToolOutcome("s", "t", {
        content: [
          { type: "text", text: "a" },
          { type: "text", text: "b" },
        ],
      }),
    ).toEqual({ ok: true, output: "a\nb" });
  });

  it("keeps text that says more than the structured result", () => {
    const out = toToolOutcome("s", "t", { content: [{ type: "text", text: "3 rows, see structured" }], structuredContent: { rows: 3 } });
    expect(out).toEqual({ ok: true, output: { text: "3 rows, see structured", structured: { rows: 3 } } });
    const twin = toToolOutcome("s", "t", { content: [{ type: "text", text: '{ "rows": 3 }' }], structuredContent: { rows: 3 } });
    expect(twin).toEqual({ ok: true, output: { structured: { rows: 3 } } });
  });

  it("isError fails the call with the text, or the structured result, or a default message", () => {
    expect(toToolOutcome("s", "t", { isError: true, content: [{ type: "text", text: "no such issue" }] })).toEqual({
      ok: false,
      kind: "failed",
      error: "no such issue",
    });
    expect(toToolOutcome("s", "t", { isError: true, content: [], structuredContent: { code: 7 } })).toEqual({
      ok: false,
      kind: "failed",
      error: '{"code":7}',
    });
    expect(toToolOutcome("s", "t", { isError: true, content: [] })).toMatchObject({
      ok: false,
      error: "The MCP tool s/t reported an error without a message.",
    });
    const withImage = toToolOutcome("s", "t", {
      isError: true,
      content: [
        { type: "text", text: "bad" },
        { type: "image", data: "AAAA", mimeType: "image/png" },
      ],
    });
    expect(withImage).toMatchObject({ ok: false, error: "bad\n(with 1 attachment(s): image image/png, 3 bytes)" });
  });

  it("a result nested deeper than the limit fails the call before anything serialises it, even as an error", () => {
    let deep: Record<string, unknown> = { leaf: 1 };
    for (let i = 0; i < 100_000; i++) deep = { a: deep };
    for (const isError of [false, true]) {
      const out = toToolOutcome("s", "t", { isError, content: [], structuredContent: deep });
      expect(out).toMatchObject({ ok: false, kind: "failed" });
      expect((out as { error: string }).error).toContain("The result of s/t nests objects and arrays deeper than 64 levels");
    }
    // The limit is the daemon's limits.json_depth: the result object, structuredContent and one level inside it are 3.
    expect(toToolOutcome("s", "t", { content: [], structuredContent: { a: {} } }, 3)).toMatchObject({ ok: true });
    expect(toToolOutcome("s", "t", { content: [], structuredContent: { a: { b: {} } } }, 3)).toMatchObject({ ok: false });
  });

  it("sizes base64 without decoding", () => {
    for (const n of [0, 1, 2, 3, 4, 5, 100]) expect(base64Bytes(Buffer.alloc(n).toString("base64"))).toBe(n);
  });

  it("tool infos: explicit hints only, titles from annotations, invalid model names skipped", () => {
    const schema = { type: "object" as const, properties: {} };
    expect(toToolInfo("lin", { name: "get", inputSchema: schema })).toEqual({
      info: {
        name: "lin/get",
        description: 'get (the MCP server "lin" gives no description)',
        inputSchema: schema,
        readOnly: false,
        idempotent: false,
      },
    });
    expect(
      toToolInfo("lin", { name: "get", inputSchema: schema, annotations: { title: "Get it", readOnlyHint: false, idempotentHint: true } }),
    ).toMatchObject({
      info: { title: "Get it", description: "Get it", readOnly: false, idempotent: true },
    });
    expect(toToolInfo("lin", { name: "a.b", inputSchema: schema })).toMatchObject({ skipped: expect.stringMatching(/lin__a\.b/) });
    expect(toToolInfo("lin", { name: "x".repeat(60), inputSchema: schema })).toHaveProperty("skipped");
  });

  it("redacts env values, header values (and bearer tokens alone) and URL secrets", () => {
    const r = redactorFor({ command: "x", env: { TOKEN: "tok-123456", SHORT: "on" }, headers: { Authorization: "Bearer abcdef123" } });
    expect(r.redact("tok-123456 abcdef123 Bearer abcdef123 on")).toBe("[redacted] [redacted] [redacted] on");
    expect(r.redact("Bearer tokens are fine")).toBe("Bearer tokens are fine");
    // Credential-like flags, as `--flag VALUE` and as `--flag=VALUE`; other flags' values stay.
    const a = redactorFor({
      command: "x",
      args: ["--token", "tok-abcdef", "--api-key=key-abcdef", "--name", "visible-name", "--auth", "--verbose"],
    });
    expect(a.redact("tok-abcdef key-abcdef visible-name --verbose")).toBe("[redacted] [redacted] visible-name --verbose");
    const u = redactorFor({ url: "https://user:pa55word@h.example/mcp?key=qwerty99" });
    expect(u.redact("pa55word qwerty99")).toBe("[redacted] [redacted]");
    expect(displayUrl("https://user:pa55word@h.example/mcp?key=qwerty99")).toBe("https://h.example/mcp");
  });

  it("stand-ins: a lent org's arguments never carry the server's credential, and what the server quotes of them is put back", () => {
    const r = redactorFor({ command: "x", env: { TOKEN: "tok-123456" } });
    const untouched = { q: "nothing secret", deep: [{ x: 1 }] };
    expect(withStandIns(untouched, r)).toEqual({ args: untouched });
    const { args, restore } = withStandIns({ q: "is it tok-123456?", url: "a?t=tok-123456" }, r);
    const sent = (args as { q: string }).q;
    expect(sent).toMatch(/^is it [A-Za-z0-9]{10}\?$/);
    expect(JSON.stringify(args)).not.toContain("tok-123456");
    const standIn = sent.slice(6, 16);
    // The server quotes the arguments and its own credential: the one comes back as sent, the other blanked.
    const answer = r.redact(`you asked ${sent}; my token is tok-123456`);
    expect(restore!.redactValue({ text: answer })).toEqual({ text: "you asked is it tok-123456?; my token is [redacted]" });
    expect(restore!.redact(standIn)).toBe("tok-123456");
  });

  it("the stderr tail is bounded and keeps the last lines", () => {
    const tail = new StderrTail(1_000);
    for (let i = 0; i < 10_000; i++) tail.push(`line ${i}\n`);
    expect(tail.tail(2)).toBe("line 9998\nline 9999");
    expect(tail.tail(1_000, 20).length).toBeLessThanOrEqual(21);
  });
});
