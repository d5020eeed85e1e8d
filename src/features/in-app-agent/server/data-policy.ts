/**
 * A project's data policy for its assistant (`AgentDataPolicy`): how many days conversations are
 * kept after their last activity (the retention purge deletes older ones: retention.ts), and
 * whether e-mail addresses and phone numbers are masked in stored text on top of secrets, which
 * always are (redaction.ts). Read by the statement that opens a run (no round trip of its own), so
 * a change holds for the next run on every instance.
 */
import { log, Prisma, type PrismaClient } from '../host';
import type { AdmissionCheck } from './admission';
import { type MaskOptions, maskText } from './redaction';

/** Longest retention an admin can set (100 years): beyond it, keep is the same as "forever". */
export const MAX_RETENTION_DAYS = 36_500;

export interface DataPolicy {
  /** Days a conversation is kept after its last activity; null: kept until deleted. */
  retentionDays: number | null;
  /** Mask e-mail addresses and phone numbers in stored text too. */
  maskContacts: boolean;
  updatedAt: Date | null;
}

const DEFAULT_POLICY: DataPolicy = { retentionDays: null, maskContacts: false, updatedAt: null };

/**
 * The policy as a part of the run-open statement: reads whether contacts are masked, refuses
 * nothing. `maskOptions()` is what it read, for the run's recorder.
 */
export function dataPolicyRead(projectId: string): AdmissionCheck & { maskOptions(): MaskOptions } {
  let contacts = false;
  return {
    parts: (passed) => ({
      ctes: [],
      pass: passed,
      columns: [
        Prisma.sql`(SELECT "maskContacts" FROM "AgentDataPolicy" WHERE "projectId" = ${projectId}) AS "maskContacts"`,
      ],
    }),
    refusal: (row) => {
      contacts = row?.maskContacts === true;
      return null;
    },
    maskOptions: () => ({ contacts }),
  };
}

export async function loadDataPolicy(prisma: PrismaClient, projectId: string): Promise<DataPolicy> {
  const row = await prisma.agentDataPolicy.findUnique({ where: { projectId } });
  return row
    ? { retentionDays: row.retentionDays, maskContacts: row.maskContacts, updatedAt: row.updatedAt }
    : DEFAULT_POLICY;
}

/** How stored text of this project is masked (secrets always; contacts when the policy says so). */
export async function maskOptionsOf(prisma: PrismaClient, projectId: string): Promise<MaskOptions> {
  return { contacts: (await loadDataPolicy(prisma, projectId)).maskContacts };
}

export async function saveDataPolicy(
  prisma: PrismaClient,
  input: { projectId: string; userId: string; retentionDays: number | null; maskContacts: boolean },
): Promise<DataPolicy> {
  const data = { retentionDays: input.retentionDays, maskContacts: input.maskContacts, updatedById: input.userId };
  const row = await prisma.agentDataPolicy.upsert({
    where: { projectId: input.projectId },
    create: { projectId: input.projectId, ...data },
    update: data,
  });
  // ops: who changed the policy (ids and values only).
  log().info(
    {
      event: 'data_policy.changed',
      projectId: input.projectId,
      userId: input.userId,
      retentionDays: input.retentionDays,
      maskContacts: input.maskContacts,
    },
    'assistant data policy changed',
  );
  return { retentionDays: row.retentionDays, maskContacts: row.maskContacts, updatedAt: row.updatedAt };
}

/**
 * A new conversation's title with contacts masked too, when the policy asks (its secrets were
 * masked before it was stored: the policy is read by the statement that stored it). Only while the
 * title is still the one the run gave it.
 */
export async function maskConversationTitle(
  prisma: PrismaClient,
  conversationId: string,
  opts: MaskOptions,
): Promise<void> {
  const row = await prisma.agentConversation.findUnique({ where: { id: conversationId }, select: { title: true } });
  if (!row) return;
  const masked = maskText(row.title, opts);
  if (masked === row.title) return;
  await prisma.agentConversation.updateMany({
    where: { id: conversationId, title: row.title },
    data: { title: masked },
  });
}
