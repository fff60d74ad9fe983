/** What the middleware puts on a request's context for the routes. */
export type ApiEnv = { Variables: { org: string; admin: boolean; requestId: string } };
