/** How a client is named on the consent page and in "Connected apps". Free of server code. */

const MAX_NAME_CHARS = 100;

/**
 * The client's own name, cleaned (control and format characters removed, spaces collapsed, at most
 * 100 characters), or the host of its id or first redirect when it gave none.
 */
export function clientDisplayName(name: string | undefined | null, fallbackUrl: string): string {
  const cleaned = (name ?? '')
    .replace(/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/gu, ' ')
    .replace(/\s+/g, ' ')
    .trim()
    .slice(0, MAX_NAME_CHARS)
    .trim();
  if (cleaned) return cleaned;
  try {
    return new URL(fallbackUrl).host || 'Unnamed app';
  } catch {
    return 'Unnamed app';
  }
}
