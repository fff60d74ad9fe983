import { z } from "zod";

/**
 * The web console's sign-in: `POST /v1/console/links` makes a one-time link
 * for the caller's token; the console trades the link's code for that token
 * with `POST /v1/console/sessions`. The link never carries the token itself.
 */
export const ConsoleLink = z
  .object({
    url: z.string().describe("Opens the console signed in; works once, until expires_at"),
    expires_at: z.string().describe("ISO 8601 time after which the link no longer works"),
  })
  .meta({ id: "ConsoleLink" });
export type ConsoleLink = z.infer<typeof ConsoleLink>;

export const ConsoleSessionBody = z
  .strictObject({ code: z.string().min(1).max(200).describe("The code of a sign-in link (after #code= in its URL)") })
  .meta({ id: "ConsoleSessionBody" });

export const ConsoleSession = z
  .object({
    token: z.string().describe("The bearer token the link was made with; keep it for the session only"),
    org: z.string(),
    admin: z.boolean(),
  })
  .meta({ id: "ConsoleSession" });
export type ConsoleSession = z.infer<typeof ConsoleSession>;

/** Who a token is: its org, whether it is the admin token, and the orgs it can reach. */
export const WhoAmI = z
  .object({
    org: z.string().describe("The org requests act in (the token's own, or the one Wardrik-Org names)"),
    admin: z.boolean(),
    orgs: z.array(z.string()).describe("Orgs this token can act in: its own, or for the admin token every org the daemon knows"),
  })
  .meta({ id: "WhoAmI" });
export type WhoAmI = z.infer<typeof WhoAmI>;
