/**
 * tRPC for the project's assistant settings and a conversation's "always allow" grants:
 * - `settings.get` / `savePolicy` / `saveInstructions` (`agent:manage`: admins and owners): the
 *   tool permissions (the tools by role, within each role's ceiling, and argument rules) and the
 *   instructions, each saved as a new version after the one the editor started from (a save from an
 *   older version is refused SETTINGS_CONFLICT, so nobody overwrites a change they did not see);
 * - `settings.history` (`audit:read`): what changed, who and when, for the audit page;
 * - `allowances.list` / `revoke` (`agent:use`, the conversation's owner): the tools allowed for the
 *   rest of a conversation.
 * Mutations are same-origin and counted per user and minute by `projectProcedure`.
 */
import 'server-only';
import { z } from 'zod';
import { appError, hasUnstorableText, ProjectInput, projectProcedure, requestLog, router } from '../host';
import { LIMITS } from '../constants';
import { ConversationIdSchema } from '../schema';
import { declarationOf } from '../tool-declarations';
import {
  MAX_RULES_PER_TOOL,
  type PolicyIssue,
  normalizePolicy,
  policyChanges,
  policyIssues,
  ROLES,
  ToolPolicySchema,
} from '../tool-policy';
import { ceilingsOf, POLICY_TOOL_NAMES, POLICY_TOOLS } from './policy';
import { findOwnConversation } from './queries';
import {
  conversationAllowances,
  insertInstructionsVersion,
  insertPolicyVersion,
  loadAssistantSettings,
  revokeAllowance,
  settingsHistory,
} from './settings-store';

const Version = z.number().int().min(0).max(1_000_000_000);
const ToolName = z.string().regex(/^[a-z][a-z0-9_]{0,63}$/);
const HISTORY_DEFAULT = 50;

/** The assistant's tools as the settings page lists them: names, ceilings by role, the fields rules may name. */
const CATALOG = POLICY_TOOLS.map((t) => {
  const spec = declarationOf(t.name)?.rules;
  return {
    name: t.name,
    title: t.title,
    local: t.local,
    alwaysAsks: t.alwaysAsks,
    ceilings: t.ceilings,
    rules: spec
      ? Object.entries(spec.fields).map(([name, f]) => ({ name, label: f.label, values: f.values ?? null }))
      : null,
  };
});
const TITLES = new Map(POLICY_TOOLS.map((t) => [t.name, t.title]));

/** The stable code a save refused for each kind of issue answers with. */
const POLICY_ISSUE_CODES = {
  UNKNOWN_TOOL: 'POLICY_UNKNOWN_TOOL',
  BEYOND_ROLE: 'POLICY_BEYOND_ROLE',
  ALWAYS_ASKS: 'POLICY_ALWAYS_ASKS',
  ASKS_ITSELF: 'POLICY_ASKS_ITSELF',
  RULE_NOT_ALLOWED: 'POLICY_RULE_NOT_ALLOWED',
  RULE_FIELD: 'POLICY_RULE_FIELD',
  RULE_VALUE: 'POLICY_RULE_VALUE',
} as const satisfies Record<PolicyIssue['code'], string>;

function conflict(what: string, version: number): never {
  throw appError(
    'CONFLICT',
    'SETTINGS_CONFLICT',
    `Someone saved the ${what} (version ${version}) since you opened them. Review that version, then save your change again.`,
  );
}

export const settingsRouter = router({
  get: projectProcedure('agent:manage').query(async ({ ctx, input }) => {
    const saved = await loadAssistantSettings(ctx.prisma, input.projectId);
    return {
      roles: ROLES,
      tools: CATALOG,
      limits: { instructionsChars: LIMITS.maxInstructionsChars, rulesPerTool: MAX_RULES_PER_TOOL },
      ...saved,
    };
  }),

  /** A new version of the tool permissions, after `baseVersion` (the one the editor started from). */
  savePolicy: projectProcedure('agent:manage')
    .input(z.object({ baseVersion: Version, policy: ToolPolicySchema }))
    .mutation(async ({ ctx, input }) => {
      const issue = policyIssues(input.policy, ceilingsOf)[0];
      if (issue) throw appError('BAD_REQUEST', POLICY_ISSUE_CODES[issue.code], issue.message);
      const current = await loadAssistantSettings(ctx.prisma, input.projectId);
      if (current.policy.version !== input.baseVersion) conflict('tool permissions', current.policy.version);
      const policy = normalizePolicy(input.policy, ceilingsOf);
      const changes = policyChanges(current.policy.policy, policy, POLICY_TOOL_NAMES, ceilingsOf);
      if (!changes.cells.length && !changes.rules.length && !current.policy.unreadable)
        return { version: current.policy.version, changed: false };
      const version = await insertPolicyVersion(ctx.prisma, {
        projectId: input.projectId,
        baseVersion: input.baseVersion,
        policy,
        changes,
        userId: ctx.user.id,
      });
      if (version === null) {
        const now = await loadAssistantSettings(ctx.prisma, input.projectId);
        conflict('tool permissions', now.policy.version);
      }
      // ops: who changed the project's tool permissions, and how much (never what the cells say).
      requestLog(ctx.req).info(
        {
          event: 'settings.policy_saved',
          projectId: input.projectId,
          userId: ctx.user.id,
          version,
          cells: changes.cells.length,
          rules: changes.rules.length,
        },
        'tool permissions saved',
      );
      return { version, changed: true };
    }),

  /** A new version of the instructions (empty text: none), after `baseVersion`. */
  saveInstructions: projectProcedure('agent:manage')
    .input(z.object({ baseVersion: Version, text: z.string().max(LIMITS.maxInstructionsChars * 2) }))
    .mutation(async ({ ctx, input }) => {
      const text = input.text.replace(/\r\n?/g, '\n').trimEnd();
      if (text.length > LIMITS.maxInstructionsChars) {
        throw appError(
          'BAD_REQUEST',
          'INSTRUCTIONS_TOO_LONG',
          `Instructions can be at most ${LIMITS.maxInstructionsChars.toLocaleString('en-US')} characters.`,
        );
      }
      if (hasUnstorableText(text))
        throw appError('BAD_REQUEST', 'INVALID_TEXT', 'The text holds characters that cannot be stored.');
      const current = await loadAssistantSettings(ctx.prisma, input.projectId);
      if (current.instructions.version !== input.baseVersion) conflict('instructions', current.instructions.version);
      if (current.instructions.text === text) return { version: current.instructions.version, changed: false };
      const version = await insertInstructionsVersion(ctx.prisma, {
        projectId: input.projectId,
        baseVersion: input.baseVersion,
        text,
        userId: ctx.user.id,
      });
      if (version === null) {
        const now = await loadAssistantSettings(ctx.prisma, input.projectId);
        conflict('instructions', now.instructions.version);
      }
      requestLog(ctx.req).info(
        {
          event: 'settings.instructions_saved',
          projectId: input.projectId,
          userId: ctx.user.id,
          version,
          chars: text.length,
        },
        'assistant instructions saved',
      );
      return { version, changed: true };
    }),

  /** What changed in the assistant's settings, newest first (the audit page). */
  history: projectProcedure('audit:read')
    .input(z.object({ limit: z.number().int().min(1).max(200).optional() }))
    .query(async ({ ctx, input }) => {
      const entries = await settingsHistory(ctx.prisma, input.projectId, input.limit ?? HISTORY_DEFAULT);
      return { entries, titles: Object.fromEntries(TITLES) };
    }),
});

const ConversationInput = ProjectInput.extend({ conversationId: ConversationIdSchema });

async function ownConversationId(
  ctx: { prisma: Parameters<typeof findOwnConversation>[0]; user: { id: string } },
  input: { projectId: string; conversationId: string },
) {
  const c = await findOwnConversation(ctx.prisma, {
    projectId: input.projectId,
    userId: ctx.user.id,
    conversationId: input.conversationId,
  });
  if (!c) throw appError('NOT_FOUND', 'CONVERSATION_NOT_FOUND', 'Conversation not found.');
  return c.id;
}

async function allowancesOf(
  prisma: Parameters<typeof conversationAllowances>[0],
  projectId: string,
  conversationId: string,
) {
  const { policyVersion, tools } = await conversationAllowances(prisma, projectId, conversationId);
  return {
    policyVersion,
    tools: tools.map((t) => ({
      toolName: t.toolName,
      title: TITLES.get(t.toolName) ?? t.toolName,
      since: t.createdAt,
    })),
  };
}

export const allowancesRouter = router({
  /** The tools allowed for the rest of the conversation (under the project's current tool permissions). */
  list: projectProcedure('agent:use')
    .input(ConversationInput.pick({ conversationId: true }))
    .query(async ({ ctx, input }) => {
      const id = await ownConversationId(ctx, input);
      return allowancesOf(ctx.prisma, input.projectId, id);
    }),

  /** Ends "always allow" of a tool in the conversation: its next call asks again. */
  revoke: projectProcedure('agent:use')
    .input(ConversationInput.pick({ conversationId: true }).extend({ toolName: ToolName }))
    .mutation(async ({ ctx, input }) => {
      const id = await ownConversationId(ctx, input);
      const revoked = await revokeAllowance(ctx.prisma, {
        conversationId: id,
        toolName: input.toolName,
        userId: ctx.user.id,
      });
      if (!revoked)
        throw appError('NOT_FOUND', 'ALLOWANCE_NOT_FOUND', 'That tool is not allowed in this conversation.');
      requestLog(ctx.req).info(
        {
          event: 'allowance.revoked',
          projectId: input.projectId,
          conversationId: id,
          userId: ctx.user.id,
          tool: input.toolName,
        },
        'always-allow revoked',
      );
      return allowancesOf(ctx.prisma, input.projectId, id);
    }),
});
