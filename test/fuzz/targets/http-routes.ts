/**
 * Every route of the OpenAPI document the daemon serves: path, query and
 * header parameters and JSON bodies made from the route's own schemas, then
 * mangled now and then; tokens of the org, of another org, bad or none.
 */
import { authHeader, httpExchange, type FuzzTarget } from "../exchange.js";
import { fuzzBody, headerValue, randomString, wellFormed } from "../random.js";
import { valueFor, type OpenApiDocument, type Operation } from "../schema-values.js";

interface Route {
  method: string;
  path: string;
  op: Operation;
}

export function httpRoutes(doc: OpenApiDocument): FuzzTarget {
  const routes: Route[] = Object.entries(doc.paths).flatMap(([path, ops]) =>
    Object.entries(ops).map(([method, op]) => ({ method: method.toUpperCase(), path, op })),
  );
  const text = (v: unknown) => (typeof v === "string" ? v : (JSON.stringify(v) ?? ""));
  return {
    name: "http-routes",
    async once(r, ctx) {
      const { method, path, op } = r.pick(routes);
      let url = path;
      const query = new URLSearchParams();
      const headers: Record<string, string> = { ...authHeader(r, ctx) };
      for (const p of op.parameters ?? []) {
        if (!p.required && r.chance(0.5)) continue;
        const value = r.chance(0.85) ? text(valueFor(r, doc, p.schema, ctx.known, p.name)) : randomString(r);
        if (p.in === "path") url = url.replace(`{${p.name}}`, r.chance(0.9) ? encodeURIComponent(wellFormed(value)) : rawSegment(value));
        else if (p.in === "query") query.append(p.name, value.slice(0, 4_000));
        else headers[p.name] = headerValue(value).slice(0, 4_000);
      }
      if (r.chance(0.05)) query.append(randomString(r).slice(0, 20) || "x", "1");
      const json = op.requestBody?.content["application/json"];
      let body: string | undefined;
      if (json || (method !== "GET" && r.chance(0.3))) {
        headers["content-type"] = r.chance(0.95) ? "application/json" : r.pick(["text/plain", "application/x-www-form-urlencoded", ""]);
        body = fuzzBody(r, valueFor(r, doc, json?.schema, ctx.known));
      }
      const qs = query.size > 0 ? `?${query.toString()}` : "";
      return httpExchange(ctx, "http-routes", `${method} ${path}`, `${ctx.url}${url}${qs}`, {
        method,
        headers,
        ...(body !== undefined && method !== "GET" && method !== "HEAD" ? { body } : {}),
      });
    },
  };
}

/** A path segment sent as is (slashes, dots and percent signs included) when a URL can hold it. */
function rawSegment(text: string): string {
  const segment = wellFormed(text.slice(0, 200));
  return URL.canParse(`http://h/${segment}`) ? segment : encodeURIComponent(segment);
}
