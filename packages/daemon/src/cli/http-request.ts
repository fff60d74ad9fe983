import { request as httpRequest, type IncomingMessage, type RequestOptions } from "node:http";
import { NoAnswerError, type Transport, type TransportAnswer } from "@wardrik/sdk/client";

/**
 * How the CLI's requests travel: node:http under the SDK's client rather than
 * `fetch`, because loading fetch (undici) costs a short command such as
 * `wardrik ls` more CPU than everything else it does. `https:` URLs load
 * node:https on use. Connection failures, and answers cut off before their
 * end, are NoAnswerError.
 */
export const nodeHttpTransport: Transport = async (init) => {
  const target = new URL(init.url);
  const request = target.protocol === "https:" ? (await import("node:https")).request : httpRequest;
  const headers: Record<string, string> = { ...init.headers };
  if (init.body !== undefined) headers["content-length"] = String(Buffer.byteLength(init.body));
  // `signal` ends the request wherever it is (connecting, waiting, reading).
  const options: RequestOptions = { method: init.method, headers, ...(init.signal ? { signal: init.signal } : {}) };
  return new Promise<TransportAnswer>((resolve, reject) => {
    const req = request(target, options, (res: IncomingMessage) => resolve(answerOf(res)));
    req.on("error", (err: NodeJS.ErrnoException) => reject(new NoAnswerError(err.code ?? err.message, err.message)));
    req.end(init.body);
  });
};

function answerOf(res: IncomingMessage): TransportAnswer {
  return {
    status: res.statusCode ?? 0,
    header: (name) => {
      const value = res.headers[name.toLowerCase()];
      return value === undefined ? null : Array.isArray(value) ? value.join(", ") : value;
    },
    body: res,
    text: () =>
      new Promise<string>((resolve, reject) => {
        const chunks: Buffer[] = [];
        // A daemon killed mid-answer cuts the body, which is as good as no answer.
        const cut = () => reject(new NoAnswerError("ECONNRESET", "the answer was cut off"));
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("error", cut);
        res.on("aborted", cut);
        res.on("end", () => (res.complete ? resolve(Buffer.concat(chunks).toString("utf8")) : cut()));
      }),
  };
}
