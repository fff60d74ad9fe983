/**
 * Stand-ins for the application's data helpers that the seed pages' examples
 * assume (`orders`, `stripe`, `enrich`, `db`): just enough shape for the
 * examples to type-check and run.
 */
export interface Order {
  id: string;
  status: string;
  payment_intent: string;
}

const known: Order[] = [{ id: "ord_1234", status: "shipped", payment_intent: "pi_123" }];

export const orders = {
  byPaymentIntent: (paymentIntent: string): Promise<Order | undefined> =>
    Promise.resolve(known.find((o) => o.payment_intent === paymentIntent)),
  find: (id: string): Promise<Order | undefined> => Promise.resolve(known.find((o) => o.id === id)),
};

export const stripe = {
  refunds: {
    create: (params: { payment_intent: string }, options: { idempotencyKey: string }) =>
      Promise.resolve({ id: `re_${options.idempotencyKey}`, payment_intent: params.payment_intent, status: "succeeded" }),
  },
};

export const enrich = {
  lookup: (email: string) => Promise.resolve({ email, company: "Example Inc." }),
};

export const db = {
  orders: {
    where: (filter: { agent: string }) => known.map((o) => ({ ...o, agent: filter.agent })),
  },
};
