/**
 * Small zod builders shared by the config, agent and policy schemas, so a
 * rule reads the same in every file and in the JSON Schemas made from them.
 * Their messages are suffixes: read-with-schema.ts puts the key path first.
 */
import { z } from "zod";
import { NAME_PATTERN, isValidName } from "@wardrik/protocol";
import { DEFAULT_HOST } from "./types.js";

export const NAME_RULE = "1-55 letters, digits, _ or -";

/** A string that must say something. */
export const text = () => z.string().min(1, { error: "must not be empty" });

/**
 * An agent, org or policy name. A refinement rather than a pattern where the
 * value may be a `${env:...}` reference, which the JSON Schema must accept.
 */
export const nameText = (rule = `must be ${NAME_RULE}`) => z.string().refine(isValidName, { error: rule });

/** A name written as a pattern, for keys and for files whose values are never references. */
export const namePattern = (rule = `must be ${NAME_RULE}`) => z.string().regex(NAME_PATTERN, { error: rule });

export const positiveInt = () => z.number().int({ error: "must be a positive integer" }).positive({ error: "must be a positive integer" });

export const nonNegativeInt = () => z.number().int({ error: "must be an integer >= 0" }).nonnegative({ error: "must be an integer >= 0" });

export const positiveNumber = (rule = "must be a positive number") => z.number().positive({ error: rule });

export const nonNegativeNumber = () => z.number().nonnegative({ error: "must be a number >= 0" });

/** Seconds, as every duration in these files is written. */
export const seconds = () => positiveNumber("must be a positive number of seconds");

export const stringList = () => z.array(z.string());

/** Header or environment values by name. */
export const stringMap = () => z.record(z.string(), z.string());

export function isHttpUrl(value: string): boolean {
  try {
    const { protocol } = new URL(value);
    return protocol === "http:" || protocol === "https:";
  } catch {
    return false;
  }
}

export const httpUrl = () => z.string().refine(isHttpUrl, { error: "must be an http:// or https:// URL" });

/** Event type patterns: `turn.completed`, `agent.*`, `*`. */
export const eventTypePattern = () =>
  z
    .string()
    .regex(/^(\*|[a-z_]+(\.[a-z_]+)*(\.\*)?)$/, { error: "must be an event type such as turn.completed, or a pattern such as agent.*" });

const LISTEN_RULE = 'must be "host:port", ":port" or a port number (0-65535)';

/** `host:port`, `:port`, `[::1]:port`, or a bare port. */
export function parseListen(value: string): { host: string; port: number } | undefined {
  const match = /^(?:(\[[0-9A-Fa-f:.]+\]|[^\s:[\]]*):)?(\d{1,5})$/.exec(value);
  const port = Number(match?.[2]);
  if (match === null || port > 65535) return undefined;
  const host = (match[1] ?? "").replace(/^\[(.*)\]$/, "$1");
  return { host: host === "" ? DEFAULT_HOST : host, port };
}

/** A listen address, read into host and port. */
export const listenAddress = () =>
  z.union([z.string(), z.number()]).transform((value, ctx) => {
    const parsed = parseListen(String(value));
    if (parsed === undefined) {
      addIssue(ctx, [], LISTEN_RULE);
      return z.NEVER;
    }
    return parsed;
  });

/** A problem found by a refinement at `path`, reported as a missing key when `missing`. */
export function addIssue(ctx: z.RefinementCtx, path: (string | number)[], message: string, missing = false): void {
  ctx.addIssue({ code: "custom", path, message, ...(missing ? { params: { missing: true } } : {}) });
}
