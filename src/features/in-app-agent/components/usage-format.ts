/**
 * How tokens and costs are written, the same in the panel (each answer's usage) and in the review
 * (per conversation, per day, per user): one formatter, so an answer shows the same digits
 * wherever it is read.
 */

export function formatTokens(n: number): string {
  return n.toLocaleString('en-US');
}

/**
 * US dollars with as many decimals as a small amount needs: one answer of a cheap model costs a
 * fraction of a cent, which two decimals would show as $0.00. From a dollar: cents ("$1,234.57");
 * from a cent: up to four decimals ("$0.0472"); below a cent: up to six ("$0.00036"), trailing
 * zeros dropped down to two. A cost too small for six decimals is not shown as nothing:
 * "< $0.000001".
 */
export function formatUsd(usd: number): string {
  if (usd >= 1) return `$${usd.toLocaleString('en-US', { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`;
  const digits = usd >= 0.01 ? 4 : 6;
  const rounded = usd.toFixed(digits);
  if (usd > 0 && Number(rounded) === 0) return '< $0.000001';
  const fixed = rounded.replace(/0+$/, '');
  const [whole = '0', frac = ''] = fixed.split('.');
  return `$${whole}.${frac.padEnd(2, '0')}`;
}

/**
 * `text` marked "≈ " when it is partly estimated (an answer stopped or failed while the model
 * streamed: its last model call reported nothing, so its tokens were estimated).
 */
export function approximately(estimated: boolean | undefined, text: string): string {
  return estimated ? `≈ ${text}` : text;
}

/** What a screen reader says for a partly estimated figure. */
export const ESTIMATE_TITLE = 'Partly estimated: the answer was stopped or failed while the model was writing';
