import type { McpServerEntry } from "../../config/types.js";
import { SecretRedactor } from "../../secrets/redactor.js";
import type { ServerCredential } from "./mcp-toolset-options.js";

/** Flags whose value is a credential: `--api-key=VALUE` or `--api-key VALUE`. */
const SECRET_FLAG = /token|key|secret|passw|credential|auth/i;
const AUTH_SCHEME = /^(bearer|basic|digest|token|bot)$/i;

/**
 * A redactor for one server: everything `base` blanks (the known secrets)
 * plus the server's own credentials from config.yaml: every `${env:}` and
 * `${secret:}` value resolved into its entry (`credentials`), and those written inline: env values, header values (and a bearer
 * token alone), URL credentials, and the values of credential-like flags in
 * `args`. Messages built from the server's stderr, errors and results pass
 * through it.
 */
export function redactorFor(entry: McpServerEntry, base?: SecretRedactor, credentials: readonly ServerCredential[] = []): SecretRedactor {
  const r = base ? base.extend() : new SecretRedactor();
  for (const c of credentials) r.add(c.value, c.name);
  for (const v of Object.values(entry.env ?? {})) r.add(v);
  for (const v of Object.values(entry.headers ?? {})) {
    r.add(v);
    // `Bearer abc…`: the token alone may show up too (the scheme is no secret).
    for (const part of v.split(/\s+/)) if (!AUTH_SCHEME.test(part)) r.add(part);
  }
  r.add(entry.oauth?.client_secret);
  const args = entry.args ?? [];
  args.forEach((a, i) => {
    if (!a.startsWith("-")) return;
    const eq = a.indexOf("=");
    if (eq > 0) {
      if (SECRET_FLAG.test(a.slice(0, eq))) r.add(a.slice(eq + 1));
    } else if (SECRET_FLAG.test(a) && i + 1 < args.length && !args[i + 1]!.startsWith("-")) {
      r.add(args[i + 1]);
    }
  });
  if (entry.url) {
    try {
      const u = new URL(entry.url);
      r.add(decodeURIComponent(u.password));
      for (const v of u.searchParams.values()) r.add(v);
    } catch {
      // validated by the config loader
    }
  }
  return r;
}

/** The URL without credentials or query, for messages. */
export function displayUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname}`;
  } catch {
    return "(invalid URL)";
  }
}
