import { VERSION } from "../version.js";
import { buildDocument } from "./openapi-document.js";
import { buildApp } from "./server.js";
import type { ApiServices } from "./services.js";

/**
 * The OpenAPI document of every route a daemon can serve, a cluster node's
 * included, made without a database or a daemon: the build writes it to
 * schemas/openapi.json (shipped in the package, and what `npm run lint` checks
 * with redocly). Registering routes reads no service (handlers do, when they
 * run), so a stand-in suffices; `cluster` is set so the node routes are in.
 */
export async function describeApi(): Promise<unknown> {
  const standIn = { store: {}, cluster: {} } as unknown as ApiServices;
  const { routes } = buildApp(standIn, { authenticate: () => Promise.resolve(undefined) });
  return buildDocument(routes.describedRoutes(), VERSION);
}
