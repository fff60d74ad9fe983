import { describe, expect, it } from "vitest";
import { readSse } from "../src/sse.js";

async function parse(pieces: string[]) {
  const body = new ReadableStream<Uint8Array>({
    start(c) {
      for (const p of pieces) c.enqueue(new TextEncoder().encode(p));
      c.close();
    },
  });
  const out = [];
  for await (const m of readSse(body)) out.push(m);
  return out;
}

describe("readSse", () => {
  it("reads LF, CRLF and CR framing, comments and multi-line data, split anywhere", async () => {
    const text = "id: 1\nevent: event\ndata: a\n\n: keep-alive\r\n\r\nid: 2\r\ndata: b1\r\ndata: b2\r\n\r\ndata: c\r\r";
    const expected = [
      { event: "event", data: "a", id: "1" },
      { event: "message", data: "b1\nb2", id: "2" },
      // An id belongs to the event that sets it; the client remembers the last one for Last-Event-ID.
      { event: "message", data: "c" },
    ];
    expect(await parse([text])).toEqual(expected);
    expect(await parse(text.split(""))).toEqual(expected);
  });

  it("reads an async iterable of bytes (node:http's answer) as it reads a fetch body", async () => {
    async function* chunks() {
      for (const p of ['event: delta\ndata: {"a"', ":1}\n\n", "data: x\r"]) yield new TextEncoder().encode(p);
      yield new TextEncoder().encode("\r");
    }
    const out = [];
    for await (const m of readSse(chunks())) out.push(m);
    expect(out).toEqual([
      { event: "delta", data: '{"a":1}' },
      { event: "message", data: "x" },
    ]);
  });

  it("leaves out an event the stream ended in the middle of", async () => {
    expect(await parse(["data: whole\n\n", "data: half\n"])).toEqual([{ event: "message", data: "whole" }]);
  });
});
