/** Percentiles and rounding of the bench scripts' figures. */

/** The p-th percentile (nearest rank, the upper one between two); NaN when there are no values. */
export function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]! : Number.NaN;
}

export const median = (xs: number[]): number => pct(xs, 50);

/** Rounded to two decimals. */
export const r2 = (n: number): number => Math.round(n * 100) / 100;
