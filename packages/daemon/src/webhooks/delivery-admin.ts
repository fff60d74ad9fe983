import { WardrikError, type DeliveryPage, type DeliveryStatus, type DeliveryView } from "@wardrik/protocol";
import type { Clock } from "../ids.js";
import type { DeliveriesTable } from "../store/deliveries.js";
import { describeDelivery } from "./describe-delivery.js";

/** What `wardrik deliveries` and its routes do: list the outbox, and queue a delivery again. */
export class DeliveryAdmin {
  constructor(
    private readonly table: DeliveriesTable,
    private readonly clock: Clock,
    /** Called once a delivery is pending again, so the sender takes it at once. */
    private readonly kick: () => void,
    /** Blanks secret values (a subscriber URL may carry a token). */
    /** An org's known secret values out of what that org is shown. */
    private readonly redact: (text: string, org: string) => string = (t) => t,
  ) {}

  async list(
    org: string,
    query: { status?: DeliveryStatus | undefined; limit: number; cursor?: string | undefined },
  ): Promise<DeliveryPage> {
    const before = query.cursor === undefined ? undefined : readCursor(query.cursor);
    const rows = await this.table.list(org, { status: query.status, before, limit: query.limit + 1 });
    const page = rows.slice(0, query.limit);
    const attempts = await this.table.attemptsOf(page.map((r) => r.id));
    return {
      deliveries: page.map((r) => this.view(org, describeDelivery(r, attempts.get(r.id) ?? []))),
      next: rows.length > query.limit ? Buffer.from(`d:${page.at(-1)!.id}`).toString("base64url") : null,
    };
  }

  async get(org: string, id: string): Promise<DeliveryView> {
    const row = await this.table.get(org, id);
    if (!row) throw new WardrikError("not_found", `No delivery ${id}; wardrik deliveries lists them.`);
    const attempts = await this.table.attemptsOf([id]);
    return this.view(org, describeDelivery(row, attempts.get(id) ?? []));
  }

  /** Sends a delivery again (a dead letter, or one delivered before), with a fresh retry window. */
  async retry(org: string, id: string): Promise<DeliveryView> {
    if (!(await this.table.retry(org, id, this.clock.now().getTime())))
      throw new WardrikError("not_found", `No delivery ${id}; wardrik deliveries lists them.`);
    this.kick();
    return this.get(org, id);
  }

  private view(org: string, v: DeliveryView): DeliveryView {
    const redact = (t: string) => this.redact(t, org);
    return { ...v, subscriber: redact(v.subscriber), ...(v.last_error ? { last_error: redact(v.last_error) } : {}) };
  }
}

function readCursor(cursor: string): string {
  const text = Buffer.from(cursor, "base64url").toString();
  if (!text.startsWith("d:") || text.length < 3)
    throw new WardrikError(
      "bad_request",
      "Invalid request: query parameter cursor is not one this API gave out; pass a page's next value.",
    );
  return text.slice(2);
}
