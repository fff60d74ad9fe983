/**
 * Narrow requests stay narrow: a body key, query parameter or path value the
 * route does not take is a 400 that names it, and nothing happens. A misspelt
 * `conversation` used to widen cancel to every running turn, and an empty one
 * widened clear to every conversation.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { agentFile, createProject, runOfMessage, short, waitFor, type TestProject } from "../helpers/spawn-daemon.js";

let p: TestProject;
let ids: Record<string, string>;

// "hang" in the message: the model never answers (until the turn is cancelled); anything else is echoed.
const SCRIPT = `scenarios:
  - match: hang
    steps:
      - hang: true
steps:
  - text: "ok: {{message}}"
`;

interface ErrorBody {
  code: string;
  detail: string;
  retryable: boolean;
}

beforeAll(async () => {
  p = await createProject({
    scripts: { sometimes_hangs: SCRIPT },
    files: Object.fromEntries(
      ["holder", "keeper", "plain"].map((name) => [
        `agents/${name}.md`,
        agentFile({ description: "Hangs when told to", model: "sometimes_hangs" }),
      ]),
    ),
  });
  const agents = await p.apiOk<{ agents: { id: string; name: string }[] }>("GET", "/v1/agents");
  ids = Object.fromEntries(agents.agents.map((a) => [a.name, a.id]));
});

function expect400(r: { status: number; json: unknown }, ...mentions: (string | RegExp)[]): string {
  expect(r.status, JSON.stringify(r.json)).toBe(400);
  const e = r.json as ErrorBody;
  expect(e.code).toBe("bad_request");
  for (const m of mentions) expect(e.detail).toMatch(m);
  return e.detail;
}

const turnStatus = async (id: string, run: string) => (await p.apiOk<{ status: string }>("GET", `/v1/agents/${id}/turns/${run}`)).status;
const historyLength = async (id: string, key: string) =>
  (await p.apiOk<{ messages: unknown[] }>("GET", `/v1/agents/${id}/conversations/${key}/messages`)).messages.length;

describe("cancel and clear reach only what the body names", () => {
  it("a misspelt key on cancel is 400 naming the key, and none of the three running turns is cancelled", async () => {
    const id = ids.holder!;
    const runs: string[] = [];
    for (const conversation of ["target", "second", "third"]) {
      const q = await p.apiOk<{ message: string }>("POST", `/v1/agents/${id}/messages`, { text: "please hang", conversation });
      runs.push(await waitFor(async () => runOfMessage(await p.events(id), q.message), `the turn of ${conversation}`));
    }

    const misspelt = await p.api("POST", `/v1/agents/${id}/cancel`, { conversaton: "target" });
    expect400(misspelt, /"conversaton"/, /takes conversation/);
    const extra = await p.api("POST", `/v1/agents/${id}/cancel`, { conversation: "target", force: true });
    expect400(extra, /"force"/);
    const empty = await p.api("POST", `/v1/agents/${id}/cancel`, { conversation: "" });
    expect400(empty, /body\.conversation/, /must not be empty/);
    const wrongType = await p.api("POST", `/v1/agents/${id}/cancel`, { conversation: ["target"] });
    expect400(wrongType, /body\.conversation/);
    const notAnObject = await p.api("POST", `/v1/agents/${id}/cancel`, ["target"]);
    expect400(notAnObject, /body/);

    for (const run of runs) expect(await turnStatus(id, run)).toBe("running");
    expect((await p.events(id)).some((e) => short(e.type) === "turn.cancelled")).toBe(false);

    // The narrow request that is spelt right reaches exactly one turn.
    const one = await p.apiOk<{ cancelled: string[] }>("POST", `/v1/agents/${id}/cancel`, { conversation: "target" });
    expect(one.cancelled).toEqual([runs[0]]);
    expect(await turnStatus(id, runs[1]!)).toBe("running");
    const rest = await p.apiOk<{ cancelled: string[] }>("POST", `/v1/agents/${id}/cancel`);
    expect(rest.cancelled.sort()).toEqual(runs.slice(1).sort());
  });

  it("an empty conversation on clear is 400, and no conversation is emptied", async () => {
    const id = ids.keeper!;
    const keys = ["one", "two", "three"];
    for (const key of keys) await p.send(id, `hello ${key}`, key);
    const before = await Promise.all(keys.map((k) => historyLength(id, k)));
    expect(before.every((n) => n >= 2)).toBe(true);

    expect400(await p.api("POST", `/v1/agents/${id}/clear`, { conversation: "" }), /body\.conversation/, /must not be empty/);
    expect400(await p.api("POST", `/v1/agents/${id}/clear`, { conversaton: "one" }), /"conversaton"/);
    expect400(await p.api("POST", `/v1/agents/${id}/clear`, { conversation: null }), /body\.conversation/);

    expect(await Promise.all(keys.map((k) => historyLength(id, k)))).toEqual(before);
    expect((await p.events(id)).some((e) => short(e.type) === "conversation.cleared")).toBe(false);
  });
});

describe.concurrent("conversation keys are readable text", () => {
  const cases: [string, string, RegExp][] = [
    ["a right-to-left override", "main\u202Enoitasrevnoc", /U\+202E \(RIGHT-TO-LEFT OVERRIDE\) at character 5/],
    ["a left-to-right embedding", "\u202Akey", /U\+202A \(LEFT-TO-RIGHT EMBEDDING\) at character 1/],
    ["a first-strong isolate", "ab\u2068c", /U\+2068 \(FIRST STRONG ISOLATE\) at character 3/],
    ["a pop-directional isolate", "abc\u2069", /U\+2069 \(POP DIRECTIONAL ISOLATE\) at character 4/],
    ["a NUL", "ma\u0000in", /U\+0000 \(control character\) at character 3/],
    ["an escape sequence", "\u001b[31mred", /U\+001B \(control character\) at character 1/],
    ["a newline", "two\nlines", /U\+000A \(control character\) at character 4/],
    ["a C1 control", "next\u0085line", /U\+0085 \(control character\) at character 5/],
  ];
  for (const [what, key, where] of cases) {
    it(`a key with ${what} is refused with the character and its position, and nothing is queued`, async () => {
      const id = ids.plain!;
      const message = expect400(
        await p.api("POST", `/v1/agents/${id}/messages`, { text: "hi", conversation: key }),
        /body\.conversation/,
        where,
      );
      expect(message).toMatch(/control characters and bidirectional overrides are not allowed/);
      expect400(await p.api("POST", `/v1/agents/${id}/cancel`, { conversation: key }), /body\.conversation/, where);
      expect400(await p.api("POST", `/v1/agents/${id}/clear`, { conversation: key }), /body\.conversation/, where);
      expect400(await p.api("GET", `/v1/agents/${id}/conversations/${encodeURIComponent(key)}/messages`), /path parameter key/, where);
      const queued = (await p.events(id)).filter((e) => short(e.type) === "message.queued" && e.data.conversation === key);
      expect(queued).toEqual([]);
    });
  }

  it("ordinary keys with spaces, accents, emoji and right-to-left letters are fine", async () => {
    const id = ids.plain!;
    for (const key of ["thread 42", "café", "🚀 launch", "שלום", "slack:C024BE91L/1700000000.000100"]) {
      const q = await p.api<{ conversation: string }>("POST", `/v1/agents/${id}/messages`, { text: "hi", conversation: key });
      expect(q.status, q.text).toBe(202);
      expect(q.json.conversation).toBe(key);
    }
  });
});

describe.concurrent("queries and bodies a route does not take", () => {
  it("a message with a NUL character is 400 saying where, and nothing is queued (no database column can hold one)", async () => {
    const before = (await p.events(ids.plain!)).length;
    const r = await p.api("POST", `/v1/agents/${ids.plain}/messages`, { text: "abc\u0000def" });
    expect400(r, "body.text", /NUL characters \(U\+0000, first at character 4\)/);
    expect((await p.events(ids.plain!)).length).toBe(before);
  });

  it("an unknown query parameter is 400 naming it and what the route takes", async () => {
    const id = ids.plain!;
    expect400(await p.api("GET", "/v1/agents?limt=5"), /unknown query parameter "limt"/, /takes name, limit, cursor/);
    expect400(await p.api("GET", `/v1/agents/${id}/events?aftr=3`), /unknown query parameter "aftr"/, /after, limit, type/);
    expect400(await p.api("GET", `/v1/agents/${id}?verbose=1`), /unknown query parameter "verbose"/, /takes no query parameters/);
    expect400(await p.api("POST", `/v1/agents/${id}/cancel?conversation=main`, {}), /unknown query parameter "conversation"/);
    expect400(await p.api("GET", `/v1/agents/${id}/events/stream?from=3`), /unknown query parameter "from"/);
  });

  it("a query value that is not what the route takes is 400 naming the parameter", async () => {
    const id = ids.plain!;
    expect400(await p.api("GET", `/v1/agents/${id}/events?limit=ten`), /query parameter limit: must be a whole number/);
    expect400(await p.api("GET", `/v1/agents/${id}/events?after=`), /query parameter after: must be a whole number/);
    expect400(await p.api("GET", `/v1/agents/${id}/events?after=-1`), /query parameter after/);
    expect400(await p.api("GET", `/v1/agents/${id}/events?limit=1&limit=2`), /limit is given twice/);
    expect400(await p.api("GET", "/v1/agents?limit=0"), /query parameter limit/);
  });

  it("a route without a body takes none but {}", async () => {
    const id = ids.plain!;
    expect400(await p.api("POST", `/v1/agents/${id}/calls/call_00000000000000000000000000/approve`, { args: { x: 1 } }), /"args"/);
    expect400(await p.api("POST", "/v1/reload", { only: "keeper" }), /"only"/);
    expect400(await p.api("DELETE", `/v1/agents/${id}`, { force: true }), /"force"/);
    expect((await p.api("POST", "/v1/reload", {})).status).toBe(200);
    expect((await p.api("POST", "/v1/reload")).status).toBe(200);
  });

  it("every documented body and query refuses a key it does not declare (the document and the checks are one)", async () => {
    const doc = await p.apiOk<{ paths: Record<string, Record<string, { requestBody?: unknown; security?: unknown[] }>> }>(
      "GET",
      "/v1/openapi.json",
    );
    let checked = 0;
    for (const [path, ops] of Object.entries(doc.paths)) {
      // The one loose query: an authorization server adds parameters of its own (iss, session_state) to the redirect.
      if (path === "/v1/oauth/callback") continue;
      const concrete = path.replace("{id}", ids.plain!).replace(/\{[a-z]+\}/g, "x");
      for (const [method, op] of Object.entries(ops)) {
        const q = await p.api(method.toUpperCase(), `${concrete}?zz_unknown=1`, method === "get" ? undefined : {});
        expect400(q, /unknown query parameter "zz_unknown"/);
        // A body documented as any JSON (an inbound webhook's: the sender's payload) takes any key, as documented;
        // a raw body (Slack's, signed over its exact bytes) is read as sent: the route has no keys to declare.
        const schema = (op.requestBody as { content?: Record<string, { schema?: object }> } | undefined)?.content?.["application/json"]
          ?.schema;
        const anyJson = schema !== undefined && !("$ref" in schema) && !("type" in schema) && !("properties" in schema);
        if (op.requestBody && !anyJson && !isRawBody(op.requestBody)) {
          expect400(await p.api(method.toUpperCase(), concrete, { zz_unknown: 1 }), /unknown key "zz_unknown"/);
        }
        checked += 1;
      }
    }
    expect(checked).toBeGreaterThanOrEqual(20);
  });
});

/** A body documented as a string: read unparsed by its route, such as Slack's signed requests. */
function isRawBody(body: unknown): boolean {
  const content = (body as { content?: Record<string, { schema?: { type?: string } }> }).content ?? {};
  return Object.values(content).every((c) => c.schema?.type === "string");
}
