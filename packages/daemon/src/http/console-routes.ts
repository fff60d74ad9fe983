import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from "node:crypto";
import { ConsoleLink, ConsoleSession, ConsoleSessionBody, EmptyBody, WardrikError, WhoAmI } from "@wardrik/protocol";
import type { Authenticate } from "./bearer-auth.js";
import type { RouteTable } from "./route-table.js";
import type { ApiServices } from "./services.js";

/** How long a sign-in link works: long enough to switch to the browser, short enough that a leaked link is stale. */
export const CONSOLE_LINK_TTL_MS = 2 * 60 * 1000;

/**
 * The web console's sign-in. `wardrik console` asks for a link made for its
 * own token; the link carries a random code, never the token. The database
 * keeps only the code's hash and the token encrypted under a key derived from
 * the code, so neither a copy of the database nor the daemon's logs can turn
 * into a token. The console trades the code for the token once.
 */
export function registerConsoleRoutes(routes: RouteTable, svc: ApiServices, authenticate: Authenticate): void {
  const links = svc.store.consoleLinks;

  routes.add({
    method: "post",
    path: "/v1/console/links",
    operationId: "createConsoleLink",
    tags: ["console"],
    summary: "A one-time link that opens the web console signed in with the caller's token (works once, for 2 minutes)",
    description: "The link holds a random code after #code=, not the token; POST /v1/console/sessions trades the code for the token.",
    body: EmptyBody,
    bodyOptional: true,
    response: ConsoleLink,
    status: 201,
    handler: async (c) => {
      const token = /^Bearer\s+(\S+)$/i.exec(c.req.header("authorization") ?? "")![1]!;
      const code = randomBytes(32).toString("base64url");
      const now = svc.store.clock.now();
      const expires = new Date(now.getTime() + CONSOLE_LINK_TTL_MS).toISOString();
      await links.add(hashCode(code), seal(code, token), expires, now.toISOString());
      return c.json({ url: `${new URL(c.req.url).origin}/#code=${code}`, expires_at: expires }, 201);
    },
  });

  routes.add({
    method: "post",
    path: "/v1/console/sessions",
    operationId: "createConsoleSession",
    tags: ["console"],
    summary: "Trade a sign-in link's code for the token it was made with; a code works once",
    public: true,
    body: ConsoleSessionBody,
    response: ConsoleSession,
    handler: async (c, { body }) => {
      const sealed = await links.take(hashCode(body.code), svc.store.clock.now().toISOString());
      const token = sealed === undefined ? undefined : unseal(body.code, sealed);
      // The token may have been revoked since the link was made.
      const who = token === undefined ? undefined : await authenticate(token);
      if (token === undefined || !who) {
        throw new WardrikError(
          "unauthorized",
          "This sign-in link is not valid: links work once and for 2 minutes. Run `wardrik console` for a new one, or sign in with a token.",
        );
      }
      return c.json({ token, org: who.org, admin: who.admin });
    },
  });

  routes.add({
    method: "get",
    path: "/v1/whoami",
    operationId: "whoAmI",
    tags: ["console"],
    summary: "The org requests act in, whether the token is the admin token, and the orgs it can reach",
    response: WhoAmI,
    handler: async (c) => {
      const admin = c.get("admin");
      const org = c.get("org");
      const orgs = admin ? [...new Set([...(await svc.store.tokens.orgs()), org])].sort() : [org];
      return c.json({ org, admin, orgs });
    },
  });
}

function hashCode(code: string): string {
  return createHash("sha256").update(code).digest("hex");
}

/** The code is 256 random bits, so it can serve directly as key material. */
function keyOf(code: string): Buffer {
  return Buffer.from(hkdfSync("sha256", code, "", "wardrik console link", 32));
}

/** AES-256-GCM: nonce, tag and ciphertext, base64url. */
function seal(code: string, token: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", keyOf(code), iv);
  const text = Buffer.concat([cipher.update(token, "utf8"), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), text]).toString("base64url");
}

function unseal(code: string, sealed: string): string | undefined {
  try {
    const raw = Buffer.from(sealed, "base64url");
    const decipher = createDecipheriv("aes-256-gcm", keyOf(code), raw.subarray(0, 12));
    decipher.setAuthTag(raw.subarray(12, 28));
    return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString("utf8");
  } catch {
    return undefined;
  }
}
