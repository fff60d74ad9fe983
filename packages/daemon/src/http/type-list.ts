/**
 * A `type=` query's patterns: comma-separated, trimmed, empty ones dropped;
 * undefined (every type) when none is left, so that the store's filter and
 * the live one (typeMatches) always agree on what a stream shows.
 */
export function typeList(text: string | undefined): string[] | undefined {
  const types = text
    ?.split(",")
    .map((t) => t.trim())
    .filter(Boolean);
  return types && types.length > 0 ? types : undefined;
}
