// The fuzzy matcher behind /filesystem-search (reference sandbox-api.md §1.2 "Fuzzy search quirk",
// §6.8). fzf-style: the pattern's characters must appear in order (case-insensitive) in the
// candidate's path relative to the search root. Score: +16 per matched char, +8 when it follows
// the previous match directly, +10 at a word start (after / _ - . or a case change), +24 extra
// when the whole pattern is a substring of the basename; −1 per skipped char before the first
// match and per gap char (capped). Greedy from the right-most start that still matches, so the
// basename is preferred. Higher is better; no match → undefined.
export function fuzzyScore(pattern: string, candidate: string): number | undefined {
  const p = pattern.toLowerCase();
  const c = candidate.toLowerCase();
  if (p === '') return 0;
  // Find the best start: try every position where the first char occurs, keep the best score.
  let best: number | undefined;
  for (let start = c.indexOf(p[0] as string); start >= 0; start = c.indexOf(p[0] as string, start + 1)) {
    const s = scoreFrom(p, c, candidate, start);
    if (s !== undefined && (best === undefined || s > best)) best = s;
  }
  if (best === undefined) return undefined;
  const base = c.slice(c.lastIndexOf('/') + 1);
  if (base.includes(p)) best += 24;
  return best;
}

function scoreFrom(p: string, c: string, original: string, start: number): number | undefined {
  let score = -Math.min(start, 15);
  let prev = -2;
  let j = start;
  for (let i = 0; i < p.length; i++) {
    while (j < c.length && c[j] !== p[i]) j++;
    if (j >= c.length) return undefined;
    score += 16;
    if (j === prev + 1) score += 8;
    else if (prev >= 0) score -= Math.min(j - prev - 1, 8);
    if (isWordStart(original, j)) score += 10;
    prev = j;
    j++;
  }
  return score;
}

function isWordStart(s: string, i: number): boolean {
  if (i === 0) return true;
  const before = s[i - 1] as string;
  if ('/_-. '.includes(before)) return true;
  const ch = s[i] as string;
  return before === before.toLowerCase() && ch !== ch.toLowerCase();
}
