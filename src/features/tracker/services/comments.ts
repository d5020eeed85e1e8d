/**
 * Comments on issues: how a stored comment is read and shown (a comment without a member author is
 * external, untrusted text) and adding one.
 */
import { z } from 'zod';
import type { Prisma, PrismaClient } from '@/generated/prisma/client';
import { newId } from '@/server/ids';
import { SafeText } from '@/server/text';
import { type Actor, IssueNumberSchema, parseInput, requireIssue } from './shared';

const CommentBodySchema = SafeText.trim().min(1, 'Comment is empty.').max(10_000);

export interface IssueComment {
  id: string;
  body: string;
  createdAt: Date;
  /** True when written outside the team (support inbox, API key without a user): untrusted text. */
  external: boolean;
  /** The member's or the external author's name. */
  authorName: string;
  author: { id: string; name: string } | null;
}

/** The columns a comment is read with (for `toIssueComment`). */
export const COMMENT_SELECT = {
  id: true,
  body: true,
  createdAt: true,
  externalAuthor: true,
  author: { select: { id: true, name: true } },
} as const satisfies Prisma.CommentSelect;

/** A stored comment as the product shows it: a comment without a member author is external. */
export function toIssueComment(c: Prisma.CommentGetPayload<{ select: typeof COMMENT_SELECT }>): IssueComment {
  return {
    id: c.id,
    body: c.body,
    createdAt: c.createdAt,
    external: c.author === null,
    authorName: c.author?.name ?? c.externalAuthor ?? 'Unknown',
    author: c.author,
  };
}

export const AddCommentInput = z.object({ number: IssueNumberSchema, body: CommentBodySchema }).strict();
export type AddCommentInput = z.input<typeof AddCommentInput>;

/**
 * Adds a comment by `actor`. Without a user (an API key) the comment is recorded as external,
 * under `actor.displayName`.
 */
export async function addComment(
  prisma: PrismaClient,
  projectId: string,
  raw: AddCommentInput,
  actor: Actor,
): Promise<IssueComment> {
  const input = parseInput(AddCommentInput, raw);
  const issue = await requireIssue(prisma, projectId, input.number);
  const c = await prisma.comment.create({
    data: {
      id: newId('c_'),
      issueId: issue.id,
      authorId: actor.userId,
      externalAuthor: actor.userId ? null : (actor.displayName ?? 'API client').slice(0, 100),
      body: input.body,
    },
    select: COMMENT_SELECT,
  });
  // Touch the issue so "recently updated" reflects activity.
  await prisma.issue.update({ where: { id: issue.id }, data: { updatedAt: new Date() } });
  return toIssueComment(c);
}
