import { request as httpRequest, type IncomingMessage, type RequestOptions } from "node:http";

/** An answer read whole. */
export interface HttpAnswer {
  status: number;
  text: string;
}

/** A connection that failed or broke before a whole answer came; `code` is the system's (ECONNREFUSED, ...). */
export class NoAnswerError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/**
 * One request with node:http, its answer read whole. The CLI's requests go
 * this way rather than through `fetch`: loading fetch (undici) costs a
 * short command such as `wardrik ls` more CPU than everything else it does.
 * `https:` URLs load node:https on use.
 */
export async function sendRequest(
  url: string,
  init: { method: string; headers: Record<string, string>; body?: string; signal?: AbortSignal },
): Promise<HttpAnswer> {
  const target = new URL(url);
  const request = target.protocol === "https:" ? (await import("node:https")).request : httpRequest;
  const headers: Record<string, string> = { ...init.headers };
  if (init.body !== undefined) headers["content-length"] = String(Buffer.byteLength(init.body));
  // `signal` ends the request wherever it is (connecting, waiting, reading): it then fails as no answer.
  const options: RequestOptions = { method: init.method, headers, ...(init.signal ? { signal: init.signal } : {}) };
  return new Promise<HttpAnswer>((resolve, reject) => {
    const fail = (err: NodeJS.ErrnoException): void => reject(new NoAnswerError(err.code ?? err.message, err.message));
    const req = request(target, options, (res: IncomingMessage) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      // A daemon killed mid-answer cuts the body, which is as good as no answer.
      res.on("error", fail);
      res.on("aborted", () => fail(Object.assign(new Error("the answer was cut off"), { code: "ECONNRESET" })));
      res.on("end", () => {
        if (!res.complete) return fail(Object.assign(new Error("the answer was cut off"), { code: "ECONNRESET" }));
        resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8") });
      });
    });
    req.on("error", fail);
    req.end(init.body);
  });
}

/** An answer whose body is read as it comes (server-sent events). */
export interface HttpStream {
  status: number;
  /** The body's chunks; iterating throws when the connection breaks. */
  body: AsyncIterable<Buffer>;
  /** The whole body as text (for an error answer). */
  text(): Promise<string>;
}

/** A GET whose answer is streamed; `signal` ends it. Connection failures reject with NoAnswerError. */
export async function openStream(url: string, init: { headers: Record<string, string>; signal?: AbortSignal }): Promise<HttpStream> {
  const target = new URL(url);
  const request = target.protocol === "https:" ? (await import("node:https")).request : httpRequest;
  const options: RequestOptions = { method: "GET", headers: init.headers, ...(init.signal ? { signal: init.signal } : {}) };
  return new Promise<HttpStream>((resolve, reject) => {
    const req = request(target, options, (res: IncomingMessage) => {
      resolve({
        status: res.statusCode ?? 0,
        body: res,
        text: async () => {
          const chunks: Buffer[] = [];
          for await (const c of res) chunks.push(c as Buffer);
          return Buffer.concat(chunks).toString("utf8");
        },
      });
    });
    req.on("error", (err: NodeJS.ErrnoException) => reject(new NoAnswerError(err.code ?? err.message, err.message)));
    req.end();
  });
}
