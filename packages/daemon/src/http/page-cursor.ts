import { WardrikError } from "@wardrik/protocol";

/**
 * The opaque `next` of a list the API pages through: the last key of a page,
 * tagged with what it is a key of, so the next page starts after it and a
 * cursor of another list is refused.
 */
export function makeCursor(tag: string, lastKey: string): string {
  return Buffer.from(`${tag}:${lastKey}`).toString("base64url");
}

export function readCursor(tag: string, cursor: string): string {
  const text = Buffer.from(cursor, "base64url").toString();
  const key = text.startsWith(`${tag}:`) ? text.slice(tag.length + 1) : "";
  if (key === "")
    throw new WardrikError(
      "bad_request",
      "Invalid request: query parameter cursor is not one this API gave out; pass a page's next value.",
    );
  return key;
}
