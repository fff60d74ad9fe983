import { DeliveryPage, DeliveryQuery, DeliveryView } from "@wardrik/protocol";
import type { RouteTable } from "./route-table.js";
import type { ApiServices } from "./services.js";

/** The webhook outbox of the token's org: what was sent where, every attempt, and sending one again. */
export function registerDeliveryRoutes(routes: RouteTable, svc: ApiServices): void {
  routes.add({
    method: "get",
    path: "/v1/deliveries",
    operationId: "listDeliveries",
    tags: ["webhooks"],
    summary: "Webhook deliveries of the org's events, newest first, with their attempts; ?status=failed lists the dead letters",
    query: DeliveryQuery,
    response: DeliveryPage,
    handler: async (c, { query }) => c.json(await svc.events.deliveries.list(c.get("org"), query)),
  });

  routes.add({
    method: "get",
    path: "/v1/deliveries/{id}",
    operationId: "getDelivery",
    tags: ["webhooks"],
    summary: "One delivery and its attempts",
    response: DeliveryView,
    handler: async (c, { params }) => c.json(await svc.events.deliveries.get(c.get("org"), params.id)),
  });

  routes.add({
    method: "post",
    path: "/v1/deliveries/{id}/retry",
    operationId: "retryDelivery",
    tags: ["webhooks"],
    summary: "Send a delivery again (a dead letter, or one delivered before), with a fresh retry window",
    response: DeliveryView,
    handler: async (c, { params }) => c.json(await svc.events.deliveries.retry(c.get("org"), params.id)),
  });
}
