/**
 * The limits store counts per fixed window (windows of `windowSeconds` from the epoch, see
 * src/server/limits.ts) and estimates a sliding one: across a window's edge the earlier window's
 * share fades, so a test that expects exact counts or waits starts its hits with room in one window.
 * Waits for the next window when fewer than `roomMs` are left of the current one.
 */
export async function windowWithRoom(windowSeconds: number, roomMs: number): Promise<void> {
  const windowMs = windowSeconds * 1000;
  const left = windowMs - (Date.now() % windowMs);
  if (left < roomMs) await new Promise((resolve) => setTimeout(resolve, left + 100));
}
