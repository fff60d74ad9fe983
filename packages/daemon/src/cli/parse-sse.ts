export interface SseMessage {
  event: string;
  data: string;
  id?: string;
}

/** Server-sent events from a response body (a fetch body or node:http's answer): LF, CRLF and CR line ends, comments, multi-line data. */
export async function* parseSse(body: AsyncIterable<Uint8Array> | ReadableStream<Uint8Array>): AsyncGenerator<SseMessage> {
  const decoder = new TextDecoder();
  const frame = new FrameBuilder();
  let buffer = "";
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(chunk, { stream: true });
    const { lines, rest } = splitLines(buffer, false);
    buffer = rest;
    for (const line of lines) {
      const message = frame.line(line);
      if (message) yield message;
    }
  }
  // At the end a lone CR is a line end after all.
  for (const line of splitLines(buffer, true).lines) {
    const message = frame.line(line);
    if (message) yield message;
  }
}

function splitLines(buffer: string, final: boolean): { lines: string[]; rest: string } {
  const lines: string[] = [];
  for (;;) {
    const end = buffer.search(/\r\n|\r|\n/);
    // A CR at the very end may be the first half of a CRLF: wait for more.
    if (end < 0 || (!final && buffer[end] === "\r" && end === buffer.length - 1)) return { lines, rest: buffer };
    lines.push(buffer.slice(0, end));
    buffer = buffer.slice(end + (buffer.startsWith("\r\n", end) ? 2 : 1));
  }
}

class FrameBuilder {
  private event = "";
  private data: string[] = [];
  private id: string | undefined;

  /** Takes one line; returns a message when the line ends one. */
  line(line: string): SseMessage | undefined {
    if (line === "") {
      const message =
        this.data.length > 0
          ? { event: this.event || "message", data: this.data.join("\n"), ...(this.id !== undefined ? { id: this.id } : {}) }
          : undefined;
      this.event = "";
      this.data = [];
      return message;
    }
    if (line.startsWith(":")) return undefined;
    const colon = line.indexOf(":");
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
    if (field === "event") this.event = value;
    else if (field === "data") this.data.push(value);
    else if (field === "id") this.id = value;
    return undefined;
  }
}
