/**
 * The database side of single-use overrides: each token's nonce is recorded once (`McpOverrideUse`,
 * the nonce is the primary key), so a replay fails on every instance. Records whose token expired
 * more than a day ago are useless and are purged a few at a time while consuming.
 */
import 'server-only';
import type { PrismaClient } from '@/generated/prisma/client';
import { MAX_OVERRIDE_TTL_SECONDS, type OverridePayload } from './override';

/** A consumed nonce is kept this long: every token is expired by then, with a day to spare. */
export const OVERRIDE_USE_RETENTION_MS = (MAX_OVERRIDE_TTL_SECONDS + 24 * 3600) * 1000;
/** Most old records deleted per consume: the purge stays cheap and catches up over time. */
const OVERRIDE_PURGE_BATCH = 100;

/** Records the use of `payload`'s nonce. False when it was used before (a replay). */
export async function consumeOverride(
  prisma: PrismaClient,
  input: { payload: OverridePayload; apiKeyId: string; tool: string; now?: Date },
): Promise<boolean> {
  const used = await prisma.mcpOverrideUse.createMany({
    data: [
      {
        nonce: input.payload.nonce,
        apiKeyId: input.apiKeyId,
        tool: input.tool,
        ...(input.now ? { consumedAt: input.now } : {}),
      },
    ],
    skipDuplicates: true,
  });
  if (used.count !== 1) return false;
  await purgeOldOverrideUses(prisma, input.now ?? new Date());
  return true;
}

/** Deletes at most OVERRIDE_PURGE_BATCH records older than the retention. Never throws. */
async function purgeOldOverrideUses(prisma: PrismaClient, now: Date = new Date()): Promise<number> {
  try {
    const cutoff = new Date(now.getTime() - OVERRIDE_USE_RETENTION_MS);
    const old = await prisma.mcpOverrideUse.findMany({
      where: { consumedAt: { lt: cutoff } },
      orderBy: { consumedAt: 'asc' },
      take: OVERRIDE_PURGE_BATCH,
      select: { nonce: true },
    });
    if (old.length === 0) return 0;
    const res = await prisma.mcpOverrideUse.deleteMany({
      where: { nonce: { in: old.map((o) => o.nonce) }, consumedAt: { lt: cutoff } },
    });
    return res.count;
  } catch {
    // Housekeeping only: the call that consumed its token goes on.
    return 0;
  }
}
