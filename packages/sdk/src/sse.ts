import { createParser } from "eventsource-parser";

/** One server-sent event: its type (`message` when the stream names none), data and id. */
export interface SseMessage {
  event: string;
  data: string;
  id?: string;
}

/**
 * Server-sent events by the spec (CRLF, CR or LF line ends, multi-line data,
 * comments, ids) from a response body: a fetch body (a ReadableStream, read
 * with a reader, as browsers that cannot iterate one need) or any async
 * iterable of bytes (node:http's answer). Events with no data are left out.
 * The SDK's one reader of event streams: the client's follow loops, the CLI
 * and the web console all read through it.
 */
export async function* readSse(body: AsyncIterable<Uint8Array> | ReadableStream<Uint8Array>): AsyncGenerator<SseMessage> {
  const ready: SseMessage[] = [];
  const parser = createParser({
    onEvent: (e) => {
      if (e.data !== "") ready.push({ event: e.event ?? "message", data: e.data, ...(e.id !== undefined ? { id: e.id } : {}) });
    },
  });
  const decoder = new TextDecoder();
  let last = "";
  for await (const chunk of chunksOf(body)) {
    const text = decoder.decode(chunk, { stream: true });
    if (text !== "") last = text;
    parser.feed(text);
    while (ready.length > 0) yield ready.shift()!;
  }
  // At the end a CR is a line end after all (the parser waits to see whether an LF follows);
  // a last event with no blank line after it is not one, and is left out.
  if (last.endsWith("\r")) parser.feed("\n");
  while (ready.length > 0) yield ready.shift()!;
}

async function* chunksOf(body: AsyncIterable<Uint8Array> | ReadableStream<Uint8Array>): AsyncGenerator<Uint8Array> {
  if (!("getReader" in body)) {
    yield* body;
    return;
  }
  const reader = body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      yield value;
    }
  } finally {
    // A reader left early (the caller stopped) gives the stream back, cancelled.
    reader.cancel().catch(() => undefined);
  }
}
