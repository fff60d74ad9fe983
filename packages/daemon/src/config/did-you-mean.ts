/** The candidates within two edits of `name` (a typo), closest first. */
export function closeNames(name: string, candidates: readonly string[]): string[] {
  return candidates
    .map((c) => ({ c, d: editDistance(c, name) }))
    .filter(({ c, d }) => d <= 2 && d < Math.max(c.length, name.length))
    .sort((a, b) => a.d - b.d)
    .map(({ c }) => c);
}

/** ` (did you mean "model"?)` for a likely typo of one of `candidates`, else "". */
export function didYouMean(name: string, candidates: readonly string[]): string {
  const close = closeNames(name, candidates);
  return close.length ? ` (did you mean ${close.map((n) => `"${n}"`).join(" or ")}?)` : "";
}

function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      row[j] = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    prev = row;
  }
  return prev[b.length]!;
}
