/**
 * Where a client's answer to the MCP server's question (`elicitation/create`) waits for the tool
 * call that asked: one row per open question, written by whichever instance receives the answer,
 * read by the instance whose tool call waits, deleted when that call ends.
 */
import 'server-only';
import { Prisma, type PrismaClient } from '@/generated/prisma/client';

/**
 * Opens a question: its row, answerable by `principal` until `expiresAt`. Rows of questions whose
 * call stopped without deleting them (a process that died) go once expired.
 */
export async function openElicitation(
  prisma: PrismaClient,
  input: { id: string; principal: string; expiresAt: Date },
): Promise<void> {
  await prisma.mcpElicitation.deleteMany({ where: { expiresAt: { lt: new Date() } } });
  await prisma.mcpElicitation.create({ data: input });
}

/**
 * Records the client's answer to an open question of `principal`; false when there is none (an
 * unknown id, another principal's question, one already answered or expired).
 */
export async function answerElicitation(
  prisma: PrismaClient,
  input: { id: string; principal: string; response: Prisma.InputJsonValue },
): Promise<boolean> {
  const res = await prisma.mcpElicitation.updateMany({
    where: {
      id: input.id,
      principal: input.principal,
      response: { equals: Prisma.DbNull },
      expiresAt: { gt: new Date() },
    },
    data: { response: input.response },
  });
  return res.count === 1;
}

/** The answer to a question, once it came (null while it waits). */
export async function readElicitationAnswer(prisma: PrismaClient, id: string): Promise<unknown> {
  const row = await prisma.mcpElicitation.findUnique({ where: { id }, select: { response: true } });
  return row?.response ?? null;
}

/** The question is over (answered, timed out, or its call ended). */
export async function closeElicitation(prisma: PrismaClient, id: string): Promise<void> {
  await prisma.mcpElicitation.deleteMany({ where: { id } });
}
