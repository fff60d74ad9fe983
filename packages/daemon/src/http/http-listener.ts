import { createServer, STATUS_CODES, type Server } from "node:http";
import type { Socket } from "node:net";
import { getRequestListener } from "@hono/node-server";
import type { Hono } from "hono";
import { WardrikError } from "@wardrik/protocol";
import type { ApiEnv } from "./api-env.js";
import { bodyTooLarge, problemAnswer } from "./http-errors.js";
import { DRAIN_LIMIT, KEEP_ALIVE_HINT_S, KEEP_ALIVE_MS, MAX_BODY_BYTES, MAX_HEADER_BYTES } from "./limits.js";
import { requestIdFor } from "./request-id.js";
import type { HttpOptions } from "./http-options.js";

/**
 * The node HTTP server around the app. Some answers never reach the app, and
 * get the API's problem document and X-Request-Id here: a declared-too-large
 * body, a request head over MAX_HEADER_BYTES (431) or one node cannot parse
 * (400), and a request @hono/node-server refuses (a bad Host, a backslash path).
 */
export async function listen(app: Hono<ApiEnv>, host: string, port: number, opts: HttpOptions): Promise<Server> {
  const handle = getRequestListener(app.fetch, {
    errorHandler: (err) =>
      jsonError(new WardrikError("bad_request", `The request cannot be read: ${err instanceof Error ? err.message : String(err)}.`)),
  });
  const server = createServer({ maxHeaderSize: MAX_HEADER_BYTES }, (req, res) => {
    // Node would hint the real timeout; the hint stays short, well inside it (see KEEP_ALIVE_MS).
    if (res.shouldKeepAlive) {
      res.setHeader("Connection", "keep-alive");
      res.setHeader("Keep-Alive", `timeout=${KEEP_ALIVE_HINT_S}`);
    }
    // Answer a declared-too-large body at once but keep reading (and dropping)
    // it, so a client still uploading gets the 413 instead of a reset connection.
    const declared = Number(req.headers["content-length"] ?? 0);
    if (declared > MAX_BODY_BYTES) {
      const { body, headers } = problemAnswer(bodyTooLarge(), pathOf(req.url), {
        "x-request-id": requestIdFor(req.headers["x-request-id"] as string | undefined),
      });
      if (declared > DRAIN_LIMIT) {
        res.writeHead(413, { ...headers, connection: "close" }).end(body);
        return;
      }
      res.writeHead(413, headers).end(body);
      req.resume();
      return;
    }
    void handle(req, res);
  });
  server.keepAliveTimeout = KEEP_ALIVE_MS;
  server.on("clientError", (err: NodeJS.ErrnoException, socket: Socket) => answerClientError(err, socket, opts));
  server.on("upgrade", (req, socket, head) => {
    const path = pathOf(req.url);
    const handler = opts.upgrades?.[path];
    if (handler) handler(req, socket, head);
    else socket.end("HTTP/1.1 404 Not Found\r\nConnection: close\r\n\r\n");
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", (err: NodeJS.ErrnoException) => void explainListenError(err, host, port).then(reject, reject));
    server.listen(port, host, () => {
      server.removeAllListeners("error");
      resolve();
    });
  });
  return server;
}

/** Why the daemon cannot listen, with what to do; the error's code stays in the text (EADDRINUSE). */
async function explainListenError(err: NodeJS.ErrnoException, host: string, port: number): Promise<Error> {
  const where = `${host}:${port}`;
  const fix = "set another port in config.yaml's listen:, or run wardrik daemon --port N (--port 0 picks a free one)";
  if (err.code === "EADDRINUSE") {
    const wardrik = await wardrikAt(host, port);
    const who = wardrik ? `another Wardrik daemon (version ${wardrik}) listens there` : "another program listens there";
    return new Error(`Cannot listen on ${where}: the port is in use (EADDRINUSE): ${who}. Stop it, or ${fix}.`, { cause: err });
  }
  if (err.code === "EACCES")
    return new Error(`Cannot listen on ${where}: ports below 1024 need privileges (EACCES); ${fix}.`, { cause: err });
  if (err.code === "EADDRNOTAVAIL")
    return new Error(`Cannot listen on ${where}: ${host} is not an address of this machine (EADDRNOTAVAIL); fix config.yaml's listen:.`, {
      cause: err,
    });
  return err;
}

/** The version of the Wardrik daemon that answers at host:port, if one does (within a second). */
async function wardrikAt(host: string, port: number): Promise<string | undefined> {
  const at = host === "0.0.0.0" || host === "::" ? "127.0.0.1" : host.includes(":") ? `[${host}]` : host;
  try {
    const res = await fetch(`http://${at}:${port}/v1/health`, { signal: AbortSignal.timeout(1000) });
    const body = (await res.json()) as { ok?: unknown; version?: unknown };
    return body.ok === true && typeof body.version === "string" ? body.version : undefined;
  } catch {
    return undefined;
  }
}

function jsonError(err: WardrikError): Response {
  const { body, headers } = problemAnswer(err, undefined, { "x-request-id": requestIdFor(undefined) });
  return new Response(body, { status: err.status, headers });
}

/** A request target without its query (which may carry what does not belong in an error body). */
function pathOf(url: string | undefined): string {
  return (url ?? "").split("?")[0] ?? "";
}

/**
 * Node's parser refused the request before there was a request object: write
 * the answer on the socket ourselves (node's default is a bare status line).
 */
function answerClientError(err: NodeJS.ErrnoException, socket: Socket, opts: HttpOptions): void {
  const response = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (err.code === "ECONNRESET" || !socket.writable || response?.headersSent) {
    socket.destroy();
    return;
  }
  const requestId = requestIdFor(undefined);
  let error: WardrikError;
  if (err.code === "HPE_HEADER_OVERFLOW") {
    error = new WardrikError(
      "headers_too_large",
      `The request headers are larger than ${MAX_HEADER_BYTES} bytes (16 KiB); send fewer or shorter headers.`,
    );
  } else if (err.code === "ERR_HTTP_REQUEST_TIMEOUT") {
    error = new WardrikError("bad_request", "The request did not arrive in time.", { status: 408, retryable: true });
  } else {
    error = new WardrikError("bad_request", `The request is not valid HTTP (${err.code ?? err.message}).`);
  }
  const { body, headers } = problemAnswer(error, undefined, { "X-Request-Id": requestId, Connection: "close" });
  opts.log?.("debug", "request refused by the HTTP parser", { request_id: requestId, status: error.status, code: err.code });
  socket.write(
    `HTTP/1.1 ${error.status} ${STATUS_CODES[error.status] ?? "Error"}\r\n` +
      Object.entries({ ...headers, "Content-Length": String(Buffer.byteLength(body)) })
        .map(([name, value]) => `${name}: ${value}\r\n`)
        .join("") +
      "\r\n" +
      body,
  );
  dropTheRest(socket);
}

/** A refused client that sends nothing for this long is done: its connection is closed. */
const REFUSED_IDLE_MS = 1_000;
/** However it goes on, a refused client's connection is closed after this long. */
const REFUSED_DRAIN_MS = 5_000;

/**
 * After the answer, what the client still sends (the rest of an oversized
 * head) is read and dropped; the connection closes when the client closes it
 * (the answer says `Connection: close`), once it has sent nothing for
 * REFUSED_IDLE_MS, or after DRAIN_LIMIT bytes or REFUSED_DRAIN_MS. Closing
 * while it still writes would reset the connection, and the client would see
 * the reset (EPIPE, ECONNRESET) instead of the answer.
 */
function dropTheRest(socket: Socket): void {
  let dropped = 0;
  const close = () => socket.destroy();
  const cut = setTimeout(close, REFUSED_DRAIN_MS);
  let idle = setTimeout(close, REFUSED_IDLE_MS);
  cut.unref();
  socket.on("data", (chunk: Buffer) => {
    dropped += chunk.length;
    if (dropped > DRAIN_LIMIT) return close();
    clearTimeout(idle);
    idle = setTimeout(close, REFUSED_IDLE_MS);
  });
  socket.once("end", () => socket.end());
  socket.once("close", () => {
    clearTimeout(cut);
    clearTimeout(idle);
  });
  socket.resume();
}
