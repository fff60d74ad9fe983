import { describe, expect, it } from "vitest";
import { sign, signatureProblem } from "../../src/slack/verify-signature.js";
import { withoutLeadingMentions } from "../../src/slack/slack-inbound.js";

// The example from Slack's documentation on verifying requests.
const SECRET = "8f742231b10e8888abcd99yyyzzz85a5";
const BODY =
  "token=xyzz0WbapA4vBCDEFasx0q6G&team_id=T1DC2JH3J&team_domain=testteamnow&channel_id=G8PSS9T3V&channel_name=foobar&user_id=U2CERLKJA&user_name=roadrunner&command=%2Fwebhook-collect&text=&response_url=https%3A%2F%2Fhooks.slack.com%2Fcommands%2FT1DC2JH3J%2F397700885554%2F96rGlfmibIGlgcZRskXaIFfN&trigger_id=398738663015.47445629121.803a0bc887a14d10d2c447fce8b6703c";
const TS = "1531420618";
const NOW = Number(TS) * 1000;

describe("Slack request signatures", () => {
  it("matches Slack's documented example", () => {
    expect(sign(SECRET, TS, BODY)).toBe("v0=a2114d57b48eac39b9ad189dd8316235a7b4a8d21a10bd27519666489c69b503");
    expect(signatureProblem(SECRET, { timestamp: TS, signature: sign(SECRET, TS, BODY), body: Buffer.from(BODY) }, NOW)).toBeUndefined();
  });

  it("refuses a missing header, another body, another secret, and a timestamp more than 5 minutes away", () => {
    const good = sign(SECRET, TS, BODY);
    const body = Buffer.from(BODY);
    expect(signatureProblem(SECRET, { timestamp: undefined, signature: good, body }, NOW)).toMatch(/not signed/);
    expect(signatureProblem(SECRET, { timestamp: TS, signature: good, body: Buffer.from(BODY + "x") }, NOW)).toMatch(/does not match/);
    expect(signatureProblem(SECRET, { timestamp: TS, signature: sign("other", TS, BODY), body }, NOW)).toMatch(/does not match/);
    expect(signatureProblem(SECRET, { timestamp: TS, signature: "v0=short", body }, NOW)).toMatch(/does not match/);
    expect(signatureProblem(SECRET, { timestamp: TS, signature: good, body }, NOW + 5 * 60_000)).toBeUndefined();
    expect(signatureProblem(SECRET, { timestamp: TS, signature: good, body }, NOW + 5 * 60_000 + 1000)).toMatch(/more than 5 minutes/);
    expect(signatureProblem(SECRET, { timestamp: TS, signature: good, body }, NOW - 6 * 60_000)).toMatch(/more than 5 minutes/);
    expect(signatureProblem(SECRET, { timestamp: "soon", signature: good, body }, NOW)).toMatch(/Unix seconds/);
    for (const p of [signatureProblem(SECRET, { timestamp: TS, signature: "v0=00", body }, NOW)]) expect(p).not.toContain(SECRET);
  });
});

describe("messages from Slack", () => {
  it("lose the mentions that addressed the bot, not the others", () => {
    expect(withoutLeadingMentions("<@U0BOT> refund order 7")).toBe("refund order 7");
    expect(withoutLeadingMentions("<@U0BOT|wardrik>: <@U0BOT> hi")).toBe("hi");
    expect(withoutLeadingMentions("ask <@U0ANN> about it")).toBe("ask <@U0ANN> about it");
    expect(withoutLeadingMentions("<@U0BOT>")).toBe("");
  });
});
