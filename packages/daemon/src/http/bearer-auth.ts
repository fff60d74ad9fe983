import type { MiddlewareHandler } from "hono";
import { WardrikError } from "@wardrik/protocol";
import type { ApiEnv } from "./api-env.js";
import { errorResponse } from "./http-errors.js";
import { ORG_HEADER, requestOrg } from "./org-scope.js";

export type Authenticate = (token: string) => Promise<{ org: string; admin: boolean; name?: string } | undefined>;

/**
 * Bearer tokens (RFC 6750): a missing or malformed header asks for one with
 * `WWW-Authenticate: Bearer`; a token that is not valid adds `error="invalid_token"`.
 */
export function bearerAuth(authenticate: Authenticate, isPublic: (path: string) => boolean): MiddlewareHandler<ApiEnv> {
  return async (c, next) => {
    if (isPublic(c.req.path)) return next();
    const match = /^Bearer\s+(\S+)$/i.exec(c.req.header("authorization") ?? "");
    if (!match) {
      return errorResponse(
        c,
        new WardrikError(
          "unauthorized",
          "Send a bearer token: Authorization: Bearer <token> (the local admin token is in .wardrik/admin-token).",
        ),
        { "WWW-Authenticate": 'Bearer realm="wardrik"' },
      );
    }
    const who = await authenticate(match[1]!);
    if (!who) {
      return errorResponse(c, new WardrikError("unauthorized", "The bearer token is not valid."), {
        "WWW-Authenticate": 'Bearer realm="wardrik", error="invalid_token", error_description="The bearer token is not valid"',
      });
    }
    c.set("org", requestOrg(who, c.req.header(ORG_HEADER)));
    c.set("admin", who.admin);
    // Who acts, for the record of what people decide: the token's name.
    c.set("actor", `token:${who.name ?? "unnamed"}`);
    return next();
  };
}
