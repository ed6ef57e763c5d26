/** Edit distance (insertions, deletions, substitutions, swaps of neighbours: `prot` → `port` is one). */
function distance(a: string, b: string): number {
  const rows = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      rows[i][j] = Math.min(rows[i - 1][j] + 1, rows[i][j - 1] + 1, rows[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) rows[i][j] = Math.min(rows[i][j], rows[i - 2][j - 2] + 1);
    }
  }
  return rows[a.length][b.length];
}

/**
 * The known key a mistyped one most likely meant (`olama` → `ollama`, `prot` → `port`), or null when
 * none is close: at most a third of the key's letters differ (at least one edit is allowed).
 */
export function closestKey(key: string, known: readonly string[]): string | null {
  let best: { key: string; distance: number } | null = null;
  for (const candidate of known) {
    const d = distance(key.toLowerCase(), candidate);
    if (!best || d < best.distance) best = { key: candidate, distance: d };
  }
  return best && best.distance <= Math.max(1, Math.floor(key.length / 3)) ? best.key : null;
}
