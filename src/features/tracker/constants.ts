/** Tracker enums shared by server code and client components (no server imports here). */
export const ISSUE_STATUSES = ['OPEN', 'IN_PROGRESS', 'CLOSED'] as const;
export const ISSUE_PRIORITIES = ['LOW', 'MEDIUM', 'HIGH', 'URGENT'] as const;
export type IssueStatus = (typeof ISSUE_STATUSES)[number];
export type IssuePriority = (typeof ISSUE_PRIORITIES)[number];
