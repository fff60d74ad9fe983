import { connect as netConnect, isIP, type Socket } from "node:net";
import { connect as tlsConnect, type ConnectionOptions } from "node:tls";
import { HttpAnswerParser, type ParsedAnswer } from "./http-answer-parser.js";

/** What a subscriber answered: its status, Retry-After, and the start of its body (for the attempt log). */
export interface PostAnswer {
  status: number;
  retryAfter: string | undefined;
  body: string;
}

/** Where a subscriber's deliveries go, worked out once from its URL. */
export interface PostTarget {
  /** Connections are kept per origin. */
  readonly origin: string;
  readonly secure: boolean;
  readonly host: string;
  readonly port: number;
  /** The request line and the headers every request to it carries, each ending in CRLF. */
  readonly head: string;
}

/** A kept-alive connection idle this long is not used again: servers close idle ones (Node's after 5 s). */
const IDLE_MS = 4000;
const CONTROL = /[\r\n\0]/;
/** Marks an error that ends a request for good (its deadline, the daemon stopping): it is not sent once more. */
const FINAL = Symbol("final");

function finalError(message: string): Error {
  return Object.assign(new Error(message), { [FINAL]: true });
}

export function postTarget(url: string): PostTarget {
  const u = new URL(url);
  const secure = u.protocol === "https:";
  const host = u.hostname.startsWith("[") ? u.hostname.slice(1, -1) : u.hostname;
  const port = u.port ? Number(u.port) : secure ? 443 : 80;
  let head = `POST ${u.pathname}${u.search} HTTP/1.1\r\nhost: ${u.host}\r\n`;
  if (u.username || u.password) {
    const user = `${decodeURIComponent(u.username)}:${decodeURIComponent(u.password)}`;
    head += `authorization: Basic ${Buffer.from(user).toString("base64")}\r\n`;
  }
  return { origin: `${u.protocol}//${u.host}`, secure, host, port, head };
}

/** One request on one connection: settles once, whichever of answer, error, deadline or abort comes first. */
interface Exchange {
  parser: HttpAnswerParser;
  settle(err: Error | undefined, answer?: ParsedAnswer): void;
}

/** A connection to one origin; between requests it waits in its origin's idle list. */
class Connection {
  exchange: Exchange | undefined;
  /** Requests it has carried; a reused one may have been closed by the server while idle. */
  uses = 0;
  idleSince = 0;
  closed = false;

  constructor(
    readonly socket: Socket,
    readonly origin: string,
    private readonly done: (c: Connection, reusable: boolean) => void,
  ) {
    socket.on("data", (chunk: Buffer) => this.data(chunk));
    socket.on("error", (err) => this.fail(err));
    socket.on("close", () => this.close());
  }

  send(message: string, exchange: Exchange): void {
    this.exchange = exchange;
    this.uses++;
    this.socket.write(message);
  }

  fail(err: Error): void {
    const ex = this.exchange;
    this.exchange = undefined;
    this.socket.destroy();
    ex?.settle(err);
  }

  private data(chunk: Buffer): void {
    const ex = this.exchange;
    if (!ex) {
      // Bytes nobody asked for: the connection is in a state no request can use.
      this.socket.destroy();
      return;
    }
    let answer: ParsedAnswer | undefined;
    try {
      answer = ex.parser.feed(chunk);
    } catch (err) {
      this.fail(err as Error);
      return;
    }
    if (!answer) return;
    this.exchange = undefined;
    this.done(this, answer.reusable);
    ex.settle(undefined, answer);
  }

  private close(): void {
    this.closed = true;
    const ex = this.exchange;
    this.exchange = undefined;
    this.done(this, false);
    if (!ex) return;
    try {
      ex.settle(undefined, ex.parser.end());
    } catch (err) {
      ex.settle(err as Error);
    }
  }
}

/**
 * POSTs deliveries over kept-alive HTTP/1.1 connections of its own: each
 * request is one write of its head and body, and the answer is read as far
 * as a webhook needs it (status, Retry-After, the start of the body). The
 * sender runs in the daemon's process beside the turns, and node:http cost
 * about three times the CPU per request there (fetch more still); undici
 * about twice (`npm run bench -- webhook-client`, README, Architecture). Redirects
 * are not followed (a subscriber's URL is exact). A request on a reused
 * connection that the server had closed meanwhile is sent once more on a
 * new one.
 */
export class HttpPoster {
  private readonly idle = new Map<string, Connection[]>();
  private readonly busy = new Set<Connection>();

  /** `tls` adds options to every TLS connection (a test's own certificate authority). */
  constructor(private readonly tls: ConnectionOptions = {}) {}

  /** Rejects on a network error, after `timeoutMs` without the whole answer, or when `abortAll` is called. */
  post(target: PostTarget, headers: Readonly<Record<string, string>>, body: string, timeoutMs: number): Promise<PostAnswer> {
    let head = target.head;
    for (const name in headers) {
      const value = headers[name]!;
      if (CONTROL.test(value) || CONTROL.test(name)) return Promise.reject(new Error(`header ${name} has a line break`));
      head += `${name}: ${value}\r\n`;
    }
    const message = `${head}content-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
    return new Promise((resolve, reject) => {
      let settled = false;
      let conn: Connection;
      const exchange = (retry: boolean): Exchange => {
        const ex: Exchange = {
          parser: new HttpAnswerParser(),
          settle: (err, answer) => {
            if (settled) return;
            // Nothing came back on a connection the server may have closed while it was idle: once more, on a new one.
            if (err && retry && !ex.parser.started && conn.uses > 1 && !(FINAL in err)) {
              conn = this.connection(target, true);
              conn.send(message, exchange(false));
              return;
            }
            settled = true;
            clearTimeout(timer);
            if (err) reject(err);
            else resolve({ status: answer!.status, retryAfter: answer!.retryAfter, body: answer!.body });
          },
        };
        return ex;
      };
      const timer = setTimeout(() => conn.fail(finalError(`no answer within ${timeoutMs / 1000} s`)), timeoutMs);
      conn = this.connection(target, false);
      conn.send(message, exchange(true));
    });
  }

  /** Cuts off every request still out; each rejects with `reason`. */
  abortAll(reason: string): void {
    for (const c of [...this.busy]) c.fail(finalError(reason));
  }

  /** Cuts off requests still out and closes the idle connections. */
  close(reason: string): void {
    this.abortAll(reason);
    for (const list of this.idle.values()) for (const c of list) c.socket.destroy();
    this.idle.clear();
  }

  private connection(target: PostTarget, fresh: boolean): Connection {
    const list = this.idle.get(target.origin);
    const now = Date.now();
    while (!fresh && list && list.length > 0) {
      const c = list.pop()!;
      if (c.closed) continue;
      if (now - c.idleSince > IDLE_MS) {
        c.socket.destroy();
        continue;
      }
      c.socket.ref();
      this.busy.add(c);
      return c;
    }
    const socket = target.secure
      ? tlsConnect({
          host: target.host,
          port: target.port,
          ALPNProtocols: ["http/1.1"],
          ...(isIP(target.host) ? {} : { servername: target.host }),
          ...this.tls,
        })
      : netConnect({ host: target.host, port: target.port });
    socket.setNoDelay(true);
    const c = new Connection(socket, target.origin, (conn, reusable) => this.done(conn, reusable));
    this.busy.add(c);
    return c;
  }

  /** A connection's answer ended (or it closed): it waits for the next request, or goes. */
  private done(c: Connection, reusable: boolean): void {
    this.busy.delete(c);
    if (!reusable || c.closed) {
      if (!c.closed) c.socket.destroy();
      const list = this.idle.get(c.origin);
      const at = list?.indexOf(c) ?? -1;
      if (at >= 0) list!.splice(at, 1);
      return;
    }
    c.idleSince = Date.now();
    // An idle connection does not keep the process alive.
    c.socket.unref();
    let list = this.idle.get(c.origin);
    if (!list) this.idle.set(c.origin, (list = []));
    list.push(c);
  }
}
