import { hostname } from "node:os";

/** Where the other nodes of a cluster reach this one: as configured, else the listen address, named by host when it is every interface. */
export function advertisedUrl(configured: string | undefined, host: string, port: number): string {
  if (configured) return configured.replace(/\/+$/, "");
  const everywhere = host === "0.0.0.0" || host === "::" || host === "";
  return `http://${everywhere ? hostname() : host.includes(":") ? `[${host}]` : host}:${port}`;
}
