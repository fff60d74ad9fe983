/**
 * Every tool example of the seed pages ("Agents" and "Write tools"), with the
 * code of each copied as the page writes it; only the formatting is the
 * project's. Where a page shows just a `run` function, it sits in the
 * smallest tool around it. The pack test type-checks this file against the
 * packed SDK under an older zod 4; seed-examples.test.ts registers each.
 */
import { z } from "zod";
import type { Wardrik } from "@wardrik/sdk";
import { db, enrich, orders, stripe } from "./data-helpers.js";

export interface SeedExample {
  page: "Agents" | "Write tools";
  section: string;
  tool: string;
  register(wardrik: Wardrik): void;
}

export const seedExamples: SeedExample[] = [
  {
    page: "Agents",
    section: "Durable runs",
    tool: "refund_order",
    register(wardrik) {
      wardrik.tool({
        name: "refund_order",
        input: z.object({ orderId: z.string() }),
        idempotent: true,
        run: ({ orderId }, { idempotencyKey }) => stripe.refunds.create({ payment_intent: orderId }, { idempotencyKey }),
      });
    },
  },
  {
    page: "Write tools",
    section: "Write tools",
    tool: "find_order",
    register(wardrik) {
      wardrik.tool({
        name: "find_order",
        description: "Find the order associated with a Stripe payment intent, including items, address, and dates.",
        input: z.object({ payment_intent: z.string().describe("Stripe payment intent ID, such as pi_123") }),
        readOnly: true,
        run: ({ payment_intent }) => orders.byPaymentIntent(payment_intent),
      });
    },
  },
  {
    page: "Write tools",
    section: "Results and errors",
    tool: "get_order",
    register(wardrik) {
      wardrik.tool({
        name: "get_order",
        input: z.object({ order_id: z.string() }),
        run: async ({ order_id }) => {
          const order = await orders.find(order_id);
          if (!order) throw new Error(`No order ${order_id}. Order IDs look like ord_1234.`);
          return { id: order.id, status: order.status };
        },
      });
    },
  },
  {
    page: "Write tools",
    section: "The calling agent",
    tool: "my_orders",
    register(wardrik) {
      wardrik.tool({
        name: "my_orders",
        input: z.object({}),
        run: (_args, { agent }) => db.orders.where({ agent }),
      });
    },
  },
  {
    page: "Write tools",
    section: "Cost",
    tool: "enrich_contact",
    register(wardrik) {
      wardrik.tool({
        name: "enrich_contact",
        input: z.object({ email: z.string() }),
        run: async ({ email }, { cost }) => {
          const found = await enrich.lookup(email);
          cost(0.01);
          return found;
        },
      });
    },
  },
  {
    page: "Write tools",
    section: "Retries",
    tool: "refund_order",
    register(wardrik) {
      wardrik.tool({
        name: "refund_order",
        description: "Refund an order in full.",
        input: z.object({ orderId: z.string() }),
        idempotent: true,
        run: ({ orderId }, { idempotencyKey }) => stripe.refunds.create({ payment_intent: orderId }, { idempotencyKey }),
      });
    },
  },
];
