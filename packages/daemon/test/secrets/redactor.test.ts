/** The one redactor: known values out of text, JSON values and streams, whatever the chunking. */
import { describe, expect, it } from "vitest";
import { MIN_SECRET_LENGTH, SecretRedactor } from "../../src/secrets/redactor.js";

const TOKEN = "lin_api_8f2b3c9d1e";

describe("SecretRedactor", () => {
  it("replaces each occurrence of a stored secret with its name, and other values with [redacted]", () => {
    const r = new SecretRedactor();
    r.add(TOKEN, "LINEAR_TOKEN");
    r.add("hunter2-password");
    expect(r.redact(`token ${TOKEN}, again ${TOKEN}; pw hunter2-password`)).toBe(
      "token [secret:LINEAR_TOKEN], again [secret:LINEAR_TOKEN]; pw [redacted]",
    );
    expect(r.redact("nothing here")).toBe("nothing here");
  });

  it(`ignores values shorter than ${MIN_SECRET_LENGTH} characters, which would blank ordinary words`, () => {
    const r = new SecretRedactor();
    r.add("main", "SHORT");
    r.add("x".repeat(MIN_SECRET_LENGTH), "LONG_ENOUGH");
    expect(r.redact("main branch")).toBe("main branch");
    expect(r.redact("x".repeat(MIN_SECRET_LENGTH))).toBe("[secret:LONG_ENOUGH]");
  });

  it("finds a value JSON-escaped and URL-encoded, and blanks a longer value whole before a shorter one inside it", () => {
    const r = new SecretRedactor();
    r.add('pa"ss\\word/+=', "QUOTED");
    r.add("abcdef123", "INNER");
    r.add("xx-abcdef123-yy", "OUTER");
    expect(r.redact(JSON.stringify({ v: 'pa"ss\\word/+=' }))).toBe('{"v":"[secret:QUOTED]"}');
    expect(r.redact(`https://h.example/?k=${encodeURIComponent('pa"ss\\word/+=')}`)).toBe("https://h.example/?k=[secret:QUOTED]");
    expect(r.redact("xx-abcdef123-yy and abcdef123")).toBe("[secret:OUTER] and [secret:INNER]");
  });

  it("redacts every string of a JSON value, keys included, and returns the same object when there is nothing to blank", () => {
    const r = new SecretRedactor();
    r.add(TOKEN, "LINEAR_TOKEN");
    const clean = { a: [1, "two", { three: null }], b: true };
    expect(r.redactValue(clean)).toBe(clean);
    const dirty = { list: ["ok", `Bearer ${TOKEN}`], nested: { [TOKEN]: { deep: TOKEN } }, n: 3 };
    expect(r.redactValue(dirty)).toEqual({
      list: ["ok", "Bearer [secret:LINEAR_TOKEN]"],
      nested: { "[secret:LINEAR_TOKEN]": { deep: "[secret:LINEAR_TOKEN]" } },
      n: 3,
    });
    expect(dirty.list[1]).toBe(`Bearer ${TOKEN}`);
  });

  it("redacts at any depth: a value nested 1,000 or 100,000 levels deep is blanked, not passed through", () => {
    const r = new SecretRedactor();
    r.add(TOKEN, "LINEAR_TOKEN");
    for (const depth of [65, 1_000, 100_000]) {
      let value: unknown = { leak: `token ${TOKEN}` };
      for (let i = 0; i < depth; i++) value = i % 2 === 0 ? [value, "x"] : { [`k${TOKEN}`]: value };
      const out = r.redactValue(value);
      let text = "";
      // Walked without recursion, as the redactor must (JSON.stringify would overflow at 100,000).
      const stack: unknown[] = [out];
      while (stack.length > 0) {
        const v = stack.pop();
        if (typeof v === "string") text += v + "\n";
        else if (Array.isArray(v)) stack.push(...(v as unknown[]));
        else if (v && typeof v === "object") for (const [k, x] of Object.entries(v)) stack.push(k, x);
      }
      expect(text.includes(TOKEN), `depth ${depth}`).toBe(false);
      expect(text).toContain("token [secret:LINEAR_TOKEN]");
    }
    // Nothing to blank at any depth: the same object back.
    let clean: unknown = { a: "fine" };
    for (let i = 0; i < 10_000; i++) clean = [clean];
    expect(r.redactValue(clean)).toBe(clean);
  });

  it("finds every value the same way whether it knows a few or many (every org's secrets)", () => {
    // Values that share prefixes and overlap, among many others: the many-value scan must agree with a plain search.
    const values = ["sk-live-alpha1", "sk-live-alpha1-longer", "sk-lab-beta22", "beta22-overlap", "zz-gamma-333"];
    for (let i = 0; i < 40; i++) values.push(`sk-filler-${i}-${i * 7919}`);
    const many = new SecretRedactor();
    const few = new SecretRedactor();
    values.forEach((v, i) => many.add(v, `V${i}`));
    values.slice(0, 5).forEach((v, i) => few.add(v, `V${i}`));
    const texts = [
      "a sk-live-alpha1 b sk-live-alpha1-longer c",
      "sk-lab-beta22-overlap and zz-gamma-333zz-gamma-333",
      "nothing here at all, sk-live-alph only half",
      JSON.stringify({ k: "sk-live-alpha1", v: ["zz-gamma-333"] }),
    ];
    for (const t of texts) expect(many.redact(t), t).toBe(few.redact(t));
    expect(many.redact("x sk-filler-39-308841 y")).toBe("x [secret:V44] y");
    // And in a stream cut anywhere.
    for (const t of texts) {
      for (let cut = 0; cut <= t.length; cut++) {
        const s = many.stream({ keepPartials: true });
        expect(s.push(t.slice(0, cut)) + s.push(t.slice(cut)) + s.flush()).toBe(few.redact(t));
      }
    }
  });

  it("with many values, text made of their pieces: no value survives, and a stream cut anywhere agrees with the whole", () => {
    const r = new SecretRedactor();
    const values = Array.from({ length: 60 }, (_, i) => `tok-${i % 7}-${(i * 2654435761) % 100000}-end`);
    values.forEach((v, i) => r.add(v, `T${i}`));
    let seed = 7;
    const rand = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n);
    for (let round = 0; round < 200; round++) {
      let text = "";
      while (text.length < 120) {
        const v = values[rand(values.length)]!;
        text += rand(3) === 0 ? v : rand(2) === 0 ? v.slice(0, rand(v.length)) : v.slice(rand(v.length)) + " ";
      }
      const whole = r.redact(text);
      for (const v of values) expect(whole.includes(v), `${v} in ${whole}`).toBe(false);
      const cut = rand(text.length);
      const s = r.stream({ keepPartials: true });
      expect(s.push(text.slice(0, cut)) + s.push(text.slice(cut)) + s.flush()).toBe(whole);
    }
  });

  it("a value that holds itself is walked once, not forever", () => {
    const r = new SecretRedactor();
    r.add(TOKEN, "LINEAR_TOKEN");
    const loop: Record<string, unknown> = { leak: TOKEN };
    loop.self = loop;
    const out = r.redactValue(loop) as Record<string, unknown>;
    expect(out.leak).toBe("[secret:LINEAR_TOKEN]");
  });

  it("extend(): a child blanks its own values and its parent's, including values the parent learns later", () => {
    const parent = new SecretRedactor();
    const child = parent.extend();
    child.add("server-env-value");
    expect(child.redact(`${TOKEN} server-env-value`)).toBe(`${TOKEN} [redacted]`);
    parent.add(TOKEN, "LINEAR_TOKEN");
    expect(child.redact(`${TOKEN} server-env-value`)).toBe("[secret:LINEAR_TOKEN] [redacted]");
    expect(parent.redact("server-env-value")).toBe("server-env-value");
  });

  it("forOrg(): an org's view blanks its own values and those of no org, never another org's; the whole redactor blanks all", () => {
    const r = new SecretRedactor();
    const acme = r.forOrg("acme");
    const beta = r.forOrg("beta");
    r.add("acme-value-1234", "ACME_KEY", "acme");
    r.add("beta-value-5678", "BETA_KEY", "beta");
    r.add("everyone-value", undefined);
    const text = "acme-value-1234 beta-value-5678 everyone-value";
    expect(acme.redact(text)).toBe("[secret:ACME_KEY] beta-value-5678 [redacted]");
    expect(beta.redactValue({ t: text })).toEqual({ t: "acme-value-1234 [secret:BETA_KEY] [redacted]" });
    expect(r.redact(text)).toBe("[secret:ACME_KEY] [secret:BETA_KEY] [redacted]");
    expect(r.commonOnly().redact(text)).toBe("acme-value-1234 beta-value-5678 [redacted]");
    // The same value stored by two orgs: each sees its own name for it, not the other's.
    r.add("shared-value-99", "A_NAME", "acme");
    r.add("shared-value-99", "B_NAME", "beta");
    expect(acme.redact("shared-value-99")).toBe("[secret:A_NAME]");
    expect(beta.redact("shared-value-99")).toBe("[secret:B_NAME]");
    // An extension of a view (an MCP server's own values) keeps the view's scope.
    const server = acme.extend();
    server.add("server-own-value");
    expect(server.redact(`${text} server-own-value`)).toBe("[secret:ACME_KEY] beta-value-5678 [redacted] [redacted]");
    // A stream of one org's reply holds back only what could start that org's values.
    const stream = beta.stream({ keepPartials: true });
    expect(stream.push("acme-value-1234 beta-va") + stream.push("lue-5678") + stream.flush()).toBe("acme-value-1234 [secret:BETA_KEY]");
  });
});

describe("StreamRedactor", () => {
  /** Feeds `text` cut at every position into two chunks; returns what the stream let out each time. */
  function everySplit(r: SecretRedactor, text: string): string[] {
    const outs: string[] = [];
    for (let cut = 0; cut <= text.length; cut++) {
      const s = r.stream();
      outs.push(s.push(text.slice(0, cut)) + s.push(text.slice(cut)) + s.flush());
    }
    return outs;
  }

  it("finds a value split over two writes, wherever the cut falls", () => {
    const r = new SecretRedactor();
    r.add(TOKEN, "LINEAR_TOKEN");
    const line = `error: bad token ${TOKEN}\n`;
    for (const out of everySplit(r, line)) expect(out).toBe("error: bad token [secret:LINEAR_TOKEN]\n");
  });

  it("holds back only what could start a value, and lets the rest out at once", () => {
    const r = new SecretRedactor();
    r.add(TOKEN, "LINEAR_TOKEN");
    const s = r.stream();
    expect(s.push("starting up\nusing lin_a")).toBe("starting up\nusing ");
    expect(s.peek()).toBe("[redacted]");
    expect(s.push("pi_8f2b3c9d1e done\n")).toBe("[secret:LINEAR_TOKEN] done\n");
    expect(s.push("lin is a word")).toBe("lin is a word");
  });

  it("handles values that overlap each other across the cut", () => {
    const r = new SecretRedactor();
    r.add("ABCDEFGH", "FIRST");
    r.add("EFGHIJKL", "SECOND");
    for (const out of everySplit(r, "..ABCDEFGHIJKL..")) {
      expect(out).not.toMatch(/ABCD|IJKL/);
    }
  });

  it("the start of a value followed by something else is blanked too: half a secret is a leak", () => {
    const r = new SecretRedactor();
    r.add(TOKEN, "LINEAR_TOKEN");
    const s = r.stream();
    expect(s.push(`first ${TOKEN.slice(0, 9)}`)).toBe("first ");
    expect(s.push(`then other text ${TOKEN}\n`)).toBe("[redacted]then other text [secret:LINEAR_TOKEN]\n");
    // A short coincidence ("lin" starts the token too) is let out as it is.
    expect(s.push("lin")).toBe("");
    expect(s.push("ux\n")).toBe("linux\n");
  });

  it("text of a reply (keepPartials): a value split over many deltas never comes out, and the deltas add up to the redacted whole", () => {
    const r = new SecretRedactor();
    r.add(TOKEN, "LINEAR_TOKEN");
    r.add("another-secret-value", "OTHER");
    const reply = `Here: ${TOKEN}, and lin is a word, lin_api_ too; another-secret-value. The end lin_api_8f`;
    for (const size of [1, 2, 3, 4, 7]) {
      const s = r.stream({ keepPartials: true });
      const out: string[] = [];
      for (let i = 0; i < reply.length; i += size) out.push(s.push(reply.slice(i, i + size)));
      out.push(s.flush());
      const all = out.join("");
      expect(all, `deltas of ${size}`).toBe(r.redact(reply));
      // No delta, nor any run of deltas, carries the secret or more of it than a prefix that chance allows.
      expect(all.includes(TOKEN)).toBe(false);
    }
  });

  it("a stream that ends in the middle of a value does not let its start out", () => {
    const r = new SecretRedactor();
    r.add(TOKEN, "LINEAR_TOKEN");
    const s = r.stream();
    expect(s.push(`token=${TOKEN.slice(0, 10)}`)).toBe("token=");
    expect(s.flush()).toBe("[redacted]");
  });
});
