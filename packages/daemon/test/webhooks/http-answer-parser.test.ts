/**
 * Reading an HTTP/1.x answer however its bytes arrive (here, one at a time as
 * well as at once): each framing, trailers, interim answers, whether the
 * connection may carry the next request, and errors for what is not HTTP.
 */
import { describe, expect, it } from "vitest";
import { HttpAnswerParser, type ParsedAnswer } from "../../src/webhooks/http-answer-parser.js";

/** Feeds `text` whole and byte by byte; both must read the same answer (or fail the same way). */
function read(text: string, close = false): ParsedAnswer {
  const bytes = Buffer.from(text, "latin1");
  const results = [bytes.length, 1].map((size) => {
    const p = new HttpAnswerParser();
    let answer: ParsedAnswer | undefined;
    for (let i = 0; i < bytes.length; i += size) answer ??= p.feed(bytes.subarray(i, i + size));
    return answer ?? (close ? p.end() : undefined);
  });
  expect(results[1]).toEqual(results[0]);
  if (!results[0]) throw new Error("no complete answer");
  return results[0];
}

describe("HttpAnswerParser", () => {
  it("reads a Content-Length answer", () => {
    expect(read("HTTP/1.1 503 Service Unavailable\r\nRetry-After: 7\r\nContent-Length: 4\r\n\r\nbusy")).toEqual({
      status: 503,
      retryAfter: "7",
      body: "busy",
      reusable: true,
    });
  });

  it("reads a chunked answer with extensions and trailers", () => {
    const text = "HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5;ext=1\r\nhello\r\n1\r\n!\r\n0\r\nx-trailer: y\r\n\r\n";
    expect(read(text)).toEqual({ status: 200, retryAfter: undefined, body: "hello!", reusable: true });
  });

  it("skips interim answers, and their headers", () => {
    const text = "HTTP/1.1 103 Early Hints\r\nretry-after: 99\r\nlink: </a>\r\n\r\nHTTP/1.1 204 No Content\r\n\r\n";
    expect(read(text)).toEqual({ status: 204, retryAfter: undefined, body: "", reusable: true });
  });

  it("a body without a length runs to the close, and the connection is not used again", () => {
    expect(read("HTTP/1.1 200 OK\r\n\r\nall of it", true)).toEqual({
      status: 200,
      retryAfter: undefined,
      body: "all of it",
      reusable: false,
    });
  });

  it("HTTP/1.0 closes unless it says keep-alive; Connection: close closes", () => {
    expect(read("HTTP/1.0 200 OK\r\ncontent-length: 0\r\n\r\n").reusable).toBe(false);
    expect(read("HTTP/1.0 200 OK\r\nconnection: keep-alive\r\ncontent-length: 0\r\n\r\n").reusable).toBe(true);
    expect(read("HTTP/1.1 200 OK\r\nconnection: close\r\ncontent-length: 0\r\n\r\n").reusable).toBe(false);
  });

  it("says what is wrong with what is not an HTTP answer, or one cut off", () => {
    expect(() => new HttpAnswerParser().feed(Buffer.from("hello\r\n\r\n"))).toThrow("did not answer in HTTP/1.x");
    expect(() => new HttpAnswerParser().feed(Buffer.from("HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n"))).toThrow(
      "chunked body is malformed",
    );
    expect(() => new HttpAnswerParser().feed(Buffer.from("HTTP/1.1 200 OK\r\ncontent-length: -1\r\n\r\n"))).toThrow("Content-Length");
    expect(() => new HttpAnswerParser().feed(Buffer.from("HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\nHTTP/1.1"))).toThrow(
      "more than one answer",
    );
    const cut = new HttpAnswerParser();
    cut.feed(Buffer.from("HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nabc"));
    expect(() => cut.end()).toThrow("closed before the answer ended");
    expect(() => new HttpAnswerParser().feed(Buffer.alloc(70 * 1024, 65))).toThrow("over 64 KiB");
  });
});
