/**
 * HTTP conventions a client library expects: every answer has X-Request-Id
 * (and the daemon's log line for the request carries it), 401 says how to
 * authenticate, a wrong method is 405 with Allow, HEAD answers like GET
 * without the body, and what node's parser refuses (an oversized or broken
 * request head) still gets the API's problem document (RFC 9457), even while the client is
 * still sending.
 */
import { connect } from "node:net";
import type { ProblemDocument } from "@wardrik/protocol";
import { beforeAll, describe, expect, it } from "vitest";
import { agentFile, createProject, waitFor, type TestProject } from "../helpers/spawn-daemon.js";

let p: TestProject;
let id: string;

beforeAll(async () => {
  p = await createProject({
    files: { "agents/echoer.md": agentFile({ description: "Echoes", model: "script/echo" }) },
    // Debug level, so the access log line of every request is written (the default level may hide it).
    env: { WARDRIK_LOG_LEVEL: "debug" },
  });
  id = await p.agentId("echoer");
});

type ErrorBody = ProblemDocument;

/** Writes `raw` on a fresh connection and returns what came back until the server closed it. */
function rawRequest(raw: string): Promise<{ status: number; headers: Record<string, string>; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = connect(p.port, "127.0.0.1");
    let data = "";
    socket.setEncoding("utf8");
    socket.on("data", (c: string) => (data += c));
    socket.on("error", reject);
    socket.on("close", () => {
      const [head = "", body = ""] = data.split("\r\n\r\n");
      const [statusLine = "", ...lines] = head.split("\r\n");
      const headers = Object.fromEntries(
        lines.map((l) => [l.slice(0, l.indexOf(":")).toLowerCase(), l.slice(l.indexOf(":") + 1).trim()] as [string, string]),
      );
      resolve({ status: Number(statusLine.split(" ")[1]), headers, body });
    });
    socket.write(raw);
  });
}

function errorOf(text: string): ErrorBody {
  return JSON.parse(text) as ErrorBody;
}

describe.concurrent("X-Request-Id", () => {
  it("is echoed when the client sends a usable one, on success and on errors alike", async () => {
    for (const [method, path, status] of [
      ["GET", "/v1/agents", 200],
      ["GET", `/v1/agents/agt_00000000000000000000000000`, 404],
      ["POST", `/v1/agents/${id}/cancel?x=1`, 400],
      ["PUT", "/v1/agents", 405],
    ] as const) {
      const mine = `client-${method}-${status}-0123`;
      const r = await p.api(method, path, undefined, { headers: { "x-request-id": mine } });
      expect(r.status).toBe(status);
      expect(r.headers.get("x-request-id")).toBe(mine);
    }
    const anonymous = await p.api("GET", "/v1/agents", undefined, { token: null, headers: { "x-request-id": "anon-7f3a" } });
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get("x-request-id")).toBe("anon-7f3a");
    // The event stream's headers carry it too.
    const ac = new AbortController();
    const stream = await fetch(`${p.url}/v1/agents/${id}/events/stream`, {
      headers: { authorization: `Bearer ${p.token}`, "x-request-id": "follow-42" },
      signal: ac.signal,
    });
    expect(stream.status).toBe(200);
    expect(stream.headers.get("x-request-id")).toBe("follow-42");
    ac.abort();
  });

  it("is generated, different for each request, when the client sends none or one that is not sane", async () => {
    const seen = new Set<string>();
    for (const sent of [undefined, "", "has spaces in it", 'quote"d', "x".repeat(200), "ünïcode", "-leading-dash"]) {
      const r = await p.api("GET", "/v1/health", undefined, sent === undefined ? {} : { headers: { "x-request-id": sent } });
      const got = r.headers.get("x-request-id");
      expect(got).toMatch(/^req_[0-9a-f-]{36}$/);
      seen.add(got!);
    }
    expect(seen.size).toBe(7);
  });

  it("appears in the daemon's log line for that request", async () => {
    const mine = "trace-me-5d1e9c";
    await p.api("GET", `/v1/agents/${id}/events?limit=1`, undefined, { headers: { "x-request-id": mine } });
    const generated = (await p.api("GET", "/v1/agents/agt_00000000000000000000000000")).headers.get("x-request-id")!;
    const lineOf = (rid: string) =>
      p
        .daemonStderr()
        .split("\n")
        .filter((l) => l.startsWith("{"))
        .map((l) => JSON.parse(l) as Record<string, unknown>)
        .find((l) => l.request_id === rid);
    const echoed = await waitFor(async () => lineOf(mine), "the log line of the echoed request ID");
    expect(echoed).toMatchObject({ method: "GET", path: `/v1/agents/${id}/events`, status: 200 });
    const made = await waitFor(async () => lineOf(generated), "the log line of the generated request ID");
    expect(made).toMatchObject({ method: "GET", status: 404 });
  });
});

describe.concurrent("401 says how to authenticate", () => {
  it("without a token: WWW-Authenticate: Bearer, and no error attribute", async () => {
    const r = await p.api("GET", "/v1/agents", undefined, { token: null });
    expect(r.status).toBe(401);
    expect(r.headers.get("www-authenticate")).toBe('Bearer realm="wardrik"');
    const basic = await p.api("GET", "/v1/agents", undefined, { token: null, headers: { authorization: "Basic YTpi" } });
    expect(basic.status).toBe(401);
    expect(basic.headers.get("www-authenticate")).toMatch(/^Bearer realm="wardrik"$/);
  });

  it('with a wrong token: error="invalid_token"', async () => {
    for (const [method, path] of [
      ["GET", "/v1/agents"],
      ["POST", `/v1/agents/${id}/messages`],
      ["GET", `/v1/agents/${id}/events/stream`],
    ] as const) {
      const r = await p.api(method, path, method === "POST" ? { text: "hi" } : undefined, { token: "wdk_wrong" });
      expect(r.status).toBe(401);
      const challenge = r.headers.get("www-authenticate") ?? "";
      expect(challenge).toMatch(/^Bearer /);
      expect(challenge).toContain('error="invalid_token"');
      expect(errorOf(r.text).code).toBe("unauthorized");
    }
  });
});

describe.concurrent("a known path with a method it does not take", () => {
  it("is 405 with Allow listing the methods it takes", async () => {
    const allow = async (method: string, path: string, token?: null) => {
      const r = await p.api(method, path, undefined, token === null ? { token: null } : {});
      expect(r.status, `${method} ${path}`).toBe(405);
      expect(errorOf(r.text).code).toBe("method_not_allowed");
      expect(errorOf(r.text).detail).toContain(`${method} is not allowed on ${path}`);
      return (r.headers.get("allow") ?? "").split(/,\s*/).sort();
    };
    expect(await allow("PUT", "/v1/agents")).toEqual(["GET", "HEAD", "POST"]);
    expect(await allow("PATCH", `/v1/agents/${id}`)).toEqual(["DELETE", "GET", "HEAD"]);
    expect(await allow("GET", `/v1/agents/${id}/cancel`)).toEqual(["POST"]);
    expect(await allow("DELETE", `/v1/agents/${id}/events/stream`)).toEqual(["GET", "HEAD"]);
    // Public paths answer 405 without a token too.
    expect(await allow("POST", "/v1/health", null)).toEqual(["GET", "HEAD"]);
  });

  it("while an unknown path stays 404", async () => {
    const r = await p.api("PUT", "/v1/nowhere");
    expect(r.status).toBe(404);
    expect(r.headers.get("allow")).toBeNull();
  });
});

describe.concurrent("HEAD", () => {
  it("answers with GET's status and headers, problem documents included, and no body", async () => {
    const cases: [string, number, string | null][] = [
      ["/v1/health", 200, null],
      ["/v1/agents", 200, p.token],
      ["/v1/agents", 401, null],
      [`/v1/agents/agt_00000000000000000000000000`, 404, p.token],
      ["/v1/agents?bogus=1", 400, p.token],
    ];
    for (const [path, status, token] of cases) {
      const get = await p.api("GET", path, undefined, { token });
      const head = await p.api("HEAD", path, undefined, { token });
      expect(get.status, path).toBe(status);
      expect(head.status, path).toBe(status);
      expect(head.text).toBe("");
      expect(head.headers.get("content-type"), path).toBe(status < 400 ? "application/json" : "application/problem+json");
      expect(Number(head.headers.get("content-length")), path).toBe(Buffer.byteLength(get.text));
      expect(head.headers.get("x-request-id"), path).toBeTruthy();
      if (status === 401) expect(head.headers.get("www-authenticate")).toBe('Bearer realm="wardrik"');
    }
  });

  it("on a POST-only path is 405 with Allow; on the event stream it answers at once without streaming", async () => {
    const cancel = await p.api("HEAD", `/v1/agents/${id}/cancel`);
    expect(cancel.status).toBe(405);
    expect(cancel.headers.get("allow")).toBe("POST");
    expect(cancel.headers.get("content-type")).toBe("application/problem+json");
    const stream = await p.api("HEAD", `/v1/agents/${id}/events/stream`);
    expect(stream.status).toBe(200);
    expect(stream.headers.get("content-type")).toMatch(/^text\/event-stream/);
  });
});

describe.concurrent("requests node's parser refuses", () => {
  it("headers over 16 KiB get 431 with the problem document and a request ID, and the daemon keeps serving", async () => {
    const r = await rawRequest(`GET /v1/health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: ${"a".repeat(20_000)}\r\n\r\n`);
    expect(r.status).toBe(431);
    expect(r.headers["content-type"]).toBe("application/problem+json");
    expect(r.headers["x-request-id"]).toMatch(/^req_/);
    expect(Number(r.headers["content-length"])).toBe(Buffer.byteLength(r.body));
    const e = errorOf(r.body);
    expect(e).toMatchObject({ type: "about:blank", title: "Request Header Fields Too Large", status: 431, retryable: false });
    expect(e.code).toBe("headers_too_large");
    expect(e.detail).toMatch(/16384 bytes/);
    expect((await p.api("GET", "/v1/health")).status).toBe(200);
  });

  it("a client still sending an oversized head after the 431 reads the answer, not a reset connection", async () => {
    const socket = connect(p.port, "127.0.0.1");
    let data = "";
    const errors: string[] = [];
    socket.setEncoding("utf8");
    socket.on("error", (err: NodeJS.ErrnoException) => errors.push(err.code ?? err.message));
    const answered = new Promise<void>((resolve) =>
      socket.on("data", (c: string) => {
        data += c;
        if (data.includes("\r\n\r\n")) resolve();
      }),
    );
    const closed = new Promise<void>((resolve) => socket.once("close", () => resolve()));
    socket.write(`GET /v1/health?state=${"[".repeat(20_000)}`);
    await answered;
    // Like a client that writes its whole request before it reads: 8 MB more of the head after the answer came.
    for (let i = 0; i < 128 && !socket.destroyed; i++)
      await new Promise<void>((resolve) => socket.write("[".repeat(64 * 1024), () => resolve()));
    socket.end(" HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
    await closed;
    expect(errors).toEqual([]);
    expect(data).toMatch(/^HTTP\/1\.1 431 /);
  });

  it("a request that is not HTTP gets 400 with the problem document", async () => {
    const r = await rawRequest("THIS IS NOT HTTP\r\n\r\n");
    expect(r.status).toBe(400);
    expect(r.headers["content-type"]).toBe("application/problem+json");
    expect(errorOf(r.body)).toMatchObject({ type: "about:blank", title: "Bad Request", status: 400, code: "bad_request" });
  });

  it("a path with a backslash (refused before routing) gets 400 with the problem document", async () => {
    const r = await rawRequest("GET /v1\\agents HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
    expect(r.status).toBe(400);
    expect(r.headers["content-type"]).toBe("application/problem+json");
    expect(r.headers["x-request-id"]).toMatch(/^req_/);
    expect(errorOf(r.body).detail).toMatch(/Backslash/);
  });
});
