/**
 * Reads one HTTP/1.x answer from the bytes a connection receives, as far as
 * a webhook sender needs it: the status, Retry-After, the first bytes of the
 * body, where the answer ends (Content-Length, chunked, or the connection's
 * close) and whether the connection may carry the next request. Interim 1xx
 * answers are skipped. Anything it cannot read is an error, and the
 * connection is not used again.
 */

export interface ParsedAnswer {
  status: number;
  retryAfter: string | undefined;
  body: string;
  /** The connection may carry another request. */
  reusable: boolean;
}

/** An answer's head may be this large; webhook receivers answer with a few hundred bytes. */
const MAX_HEAD_BYTES = 64 * 1024;
/** The body is kept up to this much (for the attempt log); the rest is read and dropped. */
const MAX_BODY_BYTES = 4096;
const CRLF = Buffer.from("\r\n");
const HEAD_END = Buffer.from("\r\n\r\n");

type Framing = { kind: "length"; left: number } | { kind: "chunked" } | { kind: "close" };
type State = "head" | "body" | "chunk-size" | "chunk-data" | "chunk-end" | "trailers" | "done";

export class HttpAnswerParser {
  private state: State = "head";
  private pending: Buffer | undefined;
  private status = 0;
  private retryAfter: string | undefined;
  private keepAlive = true;
  private framing: Framing = { kind: "close" };
  private chunkLeft = 0;
  private readonly kept: Buffer[] = [];
  private keptBytes = 0;
  private received = false;

  /** Whether the answer has ended with the bytes fed so far. */
  get done(): boolean {
    return this.state === "done";
  }

  /** Whether any byte of an answer has arrived (a kept-alive connection the server had closed gets none). */
  get started(): boolean {
    return this.received;
  }

  /** Feeds received bytes; returns the answer once it is complete. Throws on bytes that are not HTTP/1.x. */
  feed(chunk: Buffer): ParsedAnswer | undefined {
    this.received = true;
    let data = this.pending ? Buffer.concat([this.pending, chunk]) : chunk;
    this.pending = undefined;
    while (data.length > 0) {
      if (this.state === "done") throw new Error("the subscriber sent more than one answer");
      const used = this.step(data);
      if (used < 0) {
        this.pending = data;
        if (data.length > MAX_HEAD_BYTES) throw new Error("the answer's head (or a chunk line) is over 64 KiB");
        break;
      }
      data = data.subarray(used);
    }
    return this.state === "done" ? this.answer() : undefined;
  }

  /** The connection closed: completes an answer whose body runs to the close, else says what was cut off. */
  end(): ParsedAnswer {
    if (this.state === "body" && this.framing.kind === "close") {
      this.state = "done";
      return this.answer();
    }
    if (this.state === "done") return this.answer();
    throw new Error("the connection closed before the answer ended");
  }

  private answer(): ParsedAnswer {
    return {
      status: this.status,
      retryAfter: this.retryAfter,
      body: this.kept.length === 0 ? "" : Buffer.concat(this.kept).toString("utf8"),
      reusable: this.keepAlive && this.framing.kind !== "close",
    };
  }

  /** Consumes from the front of `data`; -1 when more bytes are needed first. */
  private step(data: Buffer): number {
    switch (this.state) {
      case "head": {
        const end = data.indexOf(HEAD_END);
        if (end < 0) return -1;
        this.readHead(data.toString("latin1", 0, end));
        return end + HEAD_END.length;
      }
      case "body": {
        const take = this.framing.kind === "length" ? Math.min(this.framing.left, data.length) : data.length;
        this.keep(data.subarray(0, take));
        if (this.framing.kind === "length" && (this.framing.left -= take) === 0) this.state = "done";
        return take;
      }
      case "chunk-size": {
        const end = data.indexOf(CRLF);
        if (end < 0) return -1;
        const size = /^([0-9a-fA-F]{1,8})[ \t]*(?:;.*)?$/.exec(data.toString("latin1", 0, end));
        if (!size) throw new Error("the answer's chunked body is malformed");
        this.chunkLeft = parseInt(size[1]!, 16);
        this.state = this.chunkLeft === 0 ? "trailers" : "chunk-data";
        return end + CRLF.length;
      }
      case "chunk-data": {
        const take = Math.min(this.chunkLeft, data.length);
        this.keep(data.subarray(0, take));
        if ((this.chunkLeft -= take) === 0) this.state = "chunk-end";
        return take;
      }
      case "chunk-end": {
        if (data.length < 2) return -1;
        if (data[0] !== 13 || data[1] !== 10) throw new Error("the answer's chunked body is malformed");
        this.state = "chunk-size";
        return 2;
      }
      case "trailers": {
        const end = data.indexOf(CRLF);
        if (end < 0) return -1;
        // Trailer fields are skipped; the empty line ends the answer.
        if (end === 0) this.state = "done";
        return end + CRLF.length;
      }
      default:
        throw new Error("the subscriber sent more than one answer");
    }
  }

  private readHead(head: string): void {
    const lines = head.split("\r\n");
    const m = /^HTTP\/1\.([01]) (\d{3})(?: |$)/.exec(lines[0]!);
    if (!m) throw new Error("the subscriber did not answer in HTTP/1.x");
    const status = Number(m[2]);
    let length: number | undefined;
    let chunked = false;
    let connection = m[1] === "1" ? "keep-alive" : "close";
    for (let i = 1; i < lines.length; i++) {
      const line = lines[i]!;
      const colon = line.indexOf(":");
      if (colon <= 0) throw new Error("the answer has a malformed header line");
      const name = line.slice(0, colon).trim().toLowerCase();
      const value = line.slice(colon + 1).trim();
      if (name === "content-length") {
        if (!/^\d{1,15}$/.test(value) || (length !== undefined && length !== Number(value)))
          throw new Error("the answer's Content-Length is not a length");
        length = Number(value);
      } else if (name === "transfer-encoding") chunked = /(?:^|,)\s*chunked\s*$/i.test(value);
      else if (name === "connection") connection = value.toLowerCase();
      else if (name === "retry-after" && this.retryAfter === undefined) this.retryAfter = value;
    }
    if (status < 200) {
      // An interim answer (100 Continue, 103 Early Hints): the final one follows on the same connection.
      if (status === 101) throw new Error("the subscriber switched protocols");
      this.retryAfter = undefined;
      return;
    }
    this.status = status;
    this.keepAlive = !/(?:^|,)\s*close\s*(?:,|$)/.test(connection) && (m[1] === "1" || /keep-alive/.test(connection));
    if (status === 204 || status === 304) {
      this.framing = { kind: "length", left: 0 };
      this.state = "done";
    } else if (chunked) {
      this.framing = { kind: "chunked" };
      this.state = "chunk-size";
    } else if (length !== undefined) {
      this.framing = { kind: "length", left: length };
      this.state = length === 0 ? "done" : "body";
    } else {
      this.framing = { kind: "close" };
      this.state = "body";
    }
  }

  private keep(bytes: Buffer): void {
    if (this.keptBytes >= MAX_BODY_BYTES || bytes.length === 0) return;
    const part = bytes.subarray(0, MAX_BODY_BYTES - this.keptBytes);
    this.kept.push(part);
    this.keptBytes += part.length;
  }
}
