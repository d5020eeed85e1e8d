/** Project labels: listing (with how many issues carry each) and resolving names to ids. */
import { z } from 'zod';
import type { Prisma, PrismaClient } from '@/generated/prisma/client';
import { SafeText } from '@/server/text';
import { appError } from '@/server/trpc';
import { countedPage, type Db, type PageInput } from './shared';

export const LabelNameSchema = SafeText.trim().min(1).max(50);
export const LabelNamesSchema = z.array(LabelNameSchema).max(10);

export interface LabelInfo {
  id: string;
  name: string;
  color: string;
  issueCount: number;
}

/** Label ids for `names` (duplicates collapse); LABEL_NOT_FOUND names every unknown one. */
export async function resolveLabelIds(db: Db, projectId: string, names: string[]): Promise<string[]> {
  const unique = [...new Set(names.map((n) => n.trim()))];
  if (unique.length === 0) return [];
  const labels = await db.label.findMany({
    where: { projectId, name: { in: unique } },
    select: { id: true, name: true },
  });
  const missing = unique.filter((n) => !labels.some((l) => l.name === n));
  if (missing.length) throw appError('BAD_REQUEST', 'LABEL_NOT_FOUND', `Unknown label: ${missing.join(', ')}.`);
  return labels.map((l) => l.id);
}

const labelSelect = {
  id: true,
  name: true,
  color: true,
  _count: { select: { issues: true } },
} satisfies Prisma.LabelSelect;

function toLabelInfo(r: Prisma.LabelGetPayload<{ select: typeof labelSelect }>): LabelInfo {
  return { id: r.id, name: r.name, color: r.color, issueCount: r._count.issues };
}

export async function listLabels(prisma: PrismaClient, projectId: string): Promise<LabelInfo[]> {
  const rows = await prisma.label.findMany({ where: { projectId }, orderBy: { name: 'asc' }, select: labelSelect });
  return rows.map(toLabelInfo);
}

/** One page of the labels by name, paged in the database, with the total. */
export async function listLabelsPage(
  prisma: PrismaClient,
  projectId: string,
  raw: PageInput,
): Promise<{ labels: LabelInfo[]; total: number }> {
  const where = { projectId };
  const { rows, total } = await countedPage(
    raw,
    () => prisma.label.count({ where }),
    (page) => prisma.label.findMany({ where, orderBy: [{ name: 'asc' }, { id: 'asc' }], ...page, select: labelSelect }),
  );
  return { labels: rows.map(toLabelInfo), total };
}
