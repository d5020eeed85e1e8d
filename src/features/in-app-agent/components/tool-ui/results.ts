/**
 * The shapes of the product's tool results that the renderers show, read with zod: a result that
 * does not match (a cut-off result, a tool that changed) renders through the generic card instead.
 * Pure, for the renderers and their tests.
 */
import { z } from 'zod';

const Person = z.object({ id: z.string(), name: z.string() });

/** An issue as the product's tools return it (list rows and single issues alike). */
const IssueRowSchema = z.object({
  number: z.number().int().positive(),
  title: z.string(),
  status: z.string(),
  priority: z.string().optional(),
  assignee: Person.nullable().optional(),
  labels: z.array(z.string()).optional(),
  /** Fields written outside the team (`title`, `labels`, `body`). */
  untrustedFields: z.array(z.string()).optional(),
});
export type IssueRow = z.infer<typeof IssueRowSchema>;

/** list_issues, search_issues: rows, and (list) the total and whether more pages exist. */
export const IssueListResultSchema = z.object({
  issues: z.array(IssueRowSchema),
  total: z.number().int().nonnegative().optional(),
  hasMore: z.boolean().optional(),
});

/** get_issue, create_issue, update_issue, assign_issue, close_issue: one issue, and what changed. */
export const IssueResultSchema = z.object({
  issue: IssueRowSchema.extend({ body: z.string().optional() }),
  created: z.boolean().optional(),
  updated: z.array(z.string()).optional(),
  commentCount: z.number().int().nonnegative().optional(),
});

export const MembersResultSchema = z.object({
  members: z.array(z.object({ userId: z.string(), name: z.string(), email: z.string(), role: z.string() })),
  total: z.number().int().nonnegative().optional(),
  hasMore: z.boolean().optional(),
});

export const NavigationResultSchema = z.object({ href: z.string() });

export const DocsResultSchema = z.object({
  results: z.array(z.object({ title: z.string(), page: z.string(), excerpt: z.string() })),
});

const WORDS: Record<string, string> = {
  OPEN: 'Open',
  IN_PROGRESS: 'In progress',
  CLOSED: 'Closed',
  LOW: 'Low',
  MEDIUM: 'Medium',
  HIGH: 'High',
  URGENT: 'Urgent',
  OWNER: 'Owner',
  ADMIN: 'Admin',
  MEMBER: 'Member',
  VIEWER: 'Viewer',
};

/** A status, priority or role as people read it ("IN_PROGRESS" → "In progress"). */
export function humanize(value: string): string {
  return WORDS[value] ?? value.charAt(0) + value.slice(1).toLowerCase().replace(/_/g, ' ');
}
