import { randomInt } from "node:crypto";
import { SecretRedactor } from "../../secrets/redactor.js";

const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/** A call's arguments as the server gets them, and how to put back in its answer what stood in for a value. */
export interface StandIns {
  args: unknown;
  /** Writes each stand-in as the value it stood for; undefined when nothing was replaced. */
  restore?: SecretRedactor;
}

/**
 * The arguments of a call from an org that does not own the server's
 * credentials (a server lent to it with `orgs:`), with each value the
 * server's redactor knows replaced by a random stand-in of the same length.
 *
 * Why: the server's credentials are blanked in everything it answers, for
 * every org. Had the org sent one of them (a guess of it) as an argument, a
 * server that quotes its arguments would send it back, and seeing it come
 * back blanked would tell the org that the guess was right; sparing it
 * instead would leave it unblanked where the server quotes its own
 * credential in the same answer. With a stand-in the server never gets the
 * value from the org: where it quotes the arguments, the stand-in is put
 * back as the value the org sent; where it quotes its credential, that is
 * blanked. A right guess reads as a wrong one.
 *
 * The value is found as the redactor finds it (as it is, JSON-escaped,
 * URL-encoded) and put back as it is; a server that transforms its
 * arguments otherwise (upper case, base64) shows the stand-in transformed.
 */
export function withStandIns(args: unknown, redactor: SecretRedactor): StandIns {
  const values = [...redactor.values().keys()];
  if (values.length === 0) return { args };
  const standIns = new Map(values.map((v) => [v, randomText(v.length)]));
  const replaced = SecretRedactor.replacing(standIns).redactValue(args);
  if (replaced === args) return { args };
  return { args: replaced, restore: SecretRedactor.replacing(new Map([...standIns].map(([v, s]) => [s, v]))) };
}

function randomText(length: number): string {
  let out = "";
  for (let i = 0; i < length; i++) out += ALPHABET[randomInt(ALPHABET.length)];
  return out;
}
