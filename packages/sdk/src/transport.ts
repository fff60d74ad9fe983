/**
 * How the client's requests travel. The default is `fetch` (browsers, Node);
 * a program may pass another, such as the `wardrik` CLI's node:http one
 * (loading fetch costs a short command more CPU than the rest of its work).
 * The client does everything else: headers, retries, errors, event streams.
 */

/** One request, as the client made it. */
export interface TransportRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: string;
  /** Ends the request wherever it is; the transport then rejects (with any error). */
  signal?: AbortSignal;
}

/** An answer whose head has arrived; its body is read with `text()` or, as it comes, from `body`. */
export interface TransportAnswer {
  status: number;
  header(name: string): string | null;
  /** The whole body; rejects with NoAnswerError when the connection breaks before its end. */
  text(): Promise<string>;
  /** The body as it comes (an event stream); iterating throws when the connection breaks. */
  body: AsyncIterable<Uint8Array> | ReadableStream<Uint8Array>;
}

export type Transport = (request: TransportRequest) => Promise<TransportAnswer>;

/**
 * No answer came: the connection failed, or broke before the answer was whole.
 * `code` is the system's when there is one (ECONNREFUSED: surely never
 * reached the daemon, so another address may be tried).
 */
export class NoAnswerError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = "NoAnswerError";
  }
}

/** `fetch`, with connection failures as NoAnswerError. */
export const fetchTransport: Transport = async (request) => {
  let res: Response;
  try {
    res = await fetch(request.url, {
      method: request.method,
      headers: request.headers,
      ...(request.body !== undefined ? { body: request.body } : {}),
      ...(request.signal ? { signal: request.signal } : {}),
    });
  } catch (err) {
    if (request.signal?.aborted) throw err;
    const code = (err as { cause?: { code?: unknown } }).cause?.code;
    throw new NoAnswerError(typeof code === "string" ? code : (err as Error).message, (err as Error).message);
  }
  return {
    status: res.status,
    header: (name) => res.headers.get(name),
    text: async () => {
      try {
        return await res.text();
      } catch (err) {
        if (request.signal?.aborted) throw err;
        throw new NoAnswerError("ECONNRESET", `the answer was cut off: ${(err as Error).message}`);
      }
    },
    body: res.body ?? emptyBody(),
  };
};

async function* emptyBody(): AsyncGenerator<Uint8Array> {}

/** Whether reading a streamed answer failed because its connection broke (fetch or node:http), not because of what it held. */
export function isCutOff(err: unknown): boolean {
  if (err instanceof NoAnswerError) return true;
  const code = (err as { code?: unknown } | null)?.code;
  const message = (err as Error | null)?.message ?? "";
  return (
    code === "ECONNRESET" ||
    code === "ERR_STREAM_PREMATURE_CLOSE" ||
    code === "EPIPE" ||
    message === "aborted" ||
    // fetch's body, in Node (undici) and in browsers.
    (err instanceof TypeError && /terminated|network|fetch|load failed/i.test(message))
  );
}
