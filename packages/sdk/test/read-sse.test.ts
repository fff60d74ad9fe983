import { describe, expect, it } from "vitest";
import { parseSse } from "../../src/cli/parse-sse.js";

async function parse(pieces: string[]) {
  const body = new ReadableStream<Uint8Array>({
    start(c) {
      for (const p of pieces) c.enqueue(new TextEncoder().encode(p));
      c.close();
    },
  });
  const out = [];
  for await (const m of parseSse(body)) out.push(m);
  return out;
}

describe("parseSse", () => {
  it("reads LF, CRLF and CR framing, comments and multi-line data, split anywhere", async () => {
    const text = "id: 1\nevent: event\ndata: a\n\n: keep-alive\r\n\r\nid: 2\r\ndata: b1\r\ndata: b2\r\n\r\ndata: c\r\r";
    const expected = [
      { event: "event", data: "a", id: "1" },
      { event: "message", data: "b1\nb2", id: "2" },
      { event: "message", data: "c", id: "2" },
    ];
    expect(await parse([text])).toEqual(expected);
    expect(await parse(text.split(""))).toEqual(expected);
  });
});
