/** Largest request body; a message of 1,000,000 characters fits with room for JSON escapes. */
export const MAX_BODY_BYTES = 2 * 1024 * 1024;
/** Largest request head (request line and headers), as node's HTTP parser counts it (its default). */
export const MAX_HEADER_BYTES = 16 * 1024;
/** Past this a too-large body is not read to its end; the connection is closed instead. */
export const DRAIN_LIMIT = 64 * 1024 * 1024;
