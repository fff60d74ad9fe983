/** Largest request body; a message of 1,000,000 characters fits with room for JSON escapes. */
export const MAX_BODY_BYTES = 2 * 1024 * 1024;
/** Largest request head (request line and headers), as node's HTTP parser counts it (its default). */
export const MAX_HEADER_BYTES = 16 * 1024;
/** Past this a too-large body is not read to its end; the connection is closed instead. */
export const DRAIN_LIMIT = 64 * 1024 * 1024;
/**
 * How long a client is told it may keep an idle connection to reuse it
 * (`Keep-Alive: timeout=5`, node's usual), and how long the daemon really
 * keeps it. A client reuses a connection until its own timer, set from the
 * hint, says otherwise; on a loaded machine that timer runs late, and a
 * server that closed at the hinted time would have the client write into a
 * closed connection (ECONNRESET). The margin covers a late client.
 */
export const KEEP_ALIVE_HINT_S = 5;
export const KEEP_ALIVE_MS = 65_000;
