import { randomBytes } from "node:crypto";
import { z } from "zod";
import {
  CreatedToken,
  CreateTokenBody,
  EmptyBody,
  ReloadResult,
  SecretNames,
  SetSecretBody,
  StoredSecret,
  WardrikError,
} from "@wardrik/protocol";
import type { RouteTable } from "./route-table.js";
import type { ApiServices } from "./services.js";
import { secretNames } from "../secrets/secret-names.js";

const SecretName = z
  .string()
  .regex(/^[A-Za-z_][A-Za-z0-9_]{0,127}$/, "secret names are letters, digits and _ (not starting with a digit), at most 128")
  .describe("The name ${secret:NAME} references use");

/** Tokens, secrets and reloading agents/. */
export function registerAdminRoutes(routes: RouteTable, svc: ApiServices): void {
  routes.add({
    method: "post",
    path: "/v1/tokens",
    operationId: "createToken",
    tags: ["admin"],
    summary: "Create a bearer token for an org (admin token only); the token is shown once",
    body: CreateTokenBody,
    response: CreatedToken,
    status: 201,
    errors: [403],
    handler: async (c, { body }) => {
      if (!c.get("admin")) throw new WardrikError("unauthorized", "Only the admin token can create tokens.", { status: 403 });
      const token = "wdk_" + randomBytes(24).toString("base64url");
      const name = body.name ?? `${body.org} token`;
      await svc.store.tokens.add(body.org, name, token, false, new Date().toISOString());
      return c.json({ org: body.org, name, token }, 201);
    },
  });

  routes.add({
    method: "post",
    path: "/v1/secrets/{name}",
    operationId: "setSecret",
    tags: ["admin"],
    summary: "Store a secret for ${secret:NAME} references (encrypted at rest; takes effect at daemon restart)",
    params: { name: SecretName },
    body: SetSecretBody,
    response: StoredSecret,
    handler: async (c, { params, body }) => {
      await svc.secrets.set(c.get("org"), params.name, body.value);
      return c.json({ name: params.name, stored: true as const });
    },
  });

  routes.add({
    method: "get",
    path: "/v1/secrets",
    operationId: "listSecrets",
    tags: ["admin"],
    summary: "The names of the org's secrets (never their values), and which of them cannot be decrypted",
    response: SecretNames,
    handler: async (c) => c.json(secretNames(await svc.secrets.list(c.get("org")))),
  });

  routes.add({
    method: "post",
    path: "/v1/reload",
    operationId: "reloadAgents",
    tags: ["admin"],
    summary: "Reread agents/: add new files, update edited ones, remove deleted ones",
    body: EmptyBody,
    bodyOptional: true,
    response: ReloadResult,
    errors: [404],
    handler: async (c) => {
      if (c.get("org") !== svc.org) throw new WardrikError("not_found", "Reload is for the project's org only.");
      return c.json(await svc.reload());
    },
  });
}
