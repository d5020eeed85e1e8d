/**
 * The project's assistant settings in the database: the versions of its tool permissions and of its
 * instructions (the newest of each applies to every run opened after it, on every instance), the
 * "always allow in this conversation" grants, and the history the audit page lists. A run reads
 * what it goes by inside the statement that opens it (`runSettingsRead`, folded into `openRunRow`):
 * no round trip of its own and no cache, so a change holds from the next run on every instance.
 */
import { newId, Prisma, type PrismaClient } from '../host';
import { AgentRefusal } from '../error-codes';
import {
  type PolicyChanges,
  PolicyChangesSchema,
  ToolPolicySchema,
  type ToolPolicy,
  DEFAULT_POLICY,
} from '../tool-policy';
import type { OpenStatementRead } from './persistence';

/** What a run goes by, as its open statement read it. */
export interface ProjectRunSettings {
  /** The newest tool permissions (version 0: none saved, the defaults). */
  policy: { version: number; policy: ToolPolicy };
  /** The newest instructions (null: none saved). */
  instructions: { version: number; text: string } | null;
  /** Tools the user allowed for the rest of the conversation under that policy version. */
  allowed: string[];
}

/**
 * The reads of the run-open statement: the project's newest tool-permission and instruction
 * versions and the conversation's "always allow" grants under that permission version (a grant
 * given under an older version is gone), recorded on the run row (`policyVersion`,
 * `instructionsVersion`) from the same snapshot. Each is one index lookup.
 */
export function runSettingsRead(projectId: string, conversationId: string): OpenStatementRead {
  return {
    ctes: [
      Prisma.sql`agent_policy AS MATERIALIZED (
        SELECT "version", "policy"::text AS "policy" FROM "AgentToolPolicyVersion"
        WHERE "projectId" = ${projectId} ORDER BY "version" DESC LIMIT 1)`,
      Prisma.sql`agent_instructions AS MATERIALIZED (
        SELECT "version", "text" FROM "AgentInstructionsVersion"
        WHERE "projectId" = ${projectId} ORDER BY "version" DESC LIMIT 1)`,
      Prisma.sql`agent_allowed AS MATERIALIZED (
        SELECT COALESCE(json_agg(DISTINCT a."toolName")::text, '[]') AS "tools" FROM "AgentConversationAllow" a
        WHERE a."conversationId" = ${conversationId} AND a."revokedAt" IS NULL
          AND a."policyVersion" = COALESCE((SELECT "version" FROM agent_policy), 0))`,
    ],
    columns: [
      Prisma.sql`(SELECT "version" FROM agent_policy) AS "settingsPolicyVersion"`,
      Prisma.sql`(SELECT "policy" FROM agent_policy) AS "settingsPolicy"`,
      Prisma.sql`(SELECT "version" FROM agent_instructions) AS "settingsInstructionsVersion"`,
      Prisma.sql`(SELECT "text" FROM agent_instructions) AS "settingsInstructions"`,
      Prisma.sql`(SELECT "tools" FROM agent_allowed) AS "settingsAllowed"`,
    ],
    runColumns: [
      { name: 'policyVersion', value: Prisma.sql`(SELECT "version" FROM agent_policy)` },
      { name: 'instructionsVersion', value: Prisma.sql`(SELECT "version" FROM agent_instructions)` },
    ],
  };
}

function parseJson(text: unknown): unknown {
  if (typeof text !== 'string') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/**
 * What `runSettingsRead` selected, checked. A stored policy that does not read as a policy (written
 * around the settings page) is refused with SETTINGS_UNREADABLE rather than guessed at: the run
 * goes by no settings it cannot read.
 */
export function decodeRunSettings(row: Record<string, unknown>): ProjectRunSettings {
  const version = typeof row.settingsPolicyVersion === 'number' ? row.settingsPolicyVersion : null;
  let policy: ProjectRunSettings['policy'] = { version: 0, policy: DEFAULT_POLICY };
  if (version !== null) {
    const parsed = ToolPolicySchema.safeParse(parseJson(row.settingsPolicy));
    if (!parsed.success) throw new AgentRefusal('SETTINGS_UNREADABLE');
    policy = { version, policy: parsed.data };
  }
  const instructions =
    typeof row.settingsInstructionsVersion === 'number' && typeof row.settingsInstructions === 'string'
      ? { version: row.settingsInstructionsVersion, text: row.settingsInstructions }
      : null;
  const allowed = parseJson(row.settingsAllowed);
  return {
    policy,
    instructions,
    allowed: Array.isArray(allowed) ? allowed.filter((t): t is string => typeof t === 'string') : [],
  };
}

/**
 * The settings a run went by, read again for an instance that takes it over (takeover.ts): the
 * tool-permission and instruction versions recorded on its row (not newer ones: a run goes by one
 * set of settings to its end) and the conversation's "always allow" grants under that version
 * (those given while it ran included). Throws SETTINGS_UNREADABLE as the open statement would.
 */
export async function runSettingsOfRun(prisma: PrismaClient, runId: string): Promise<ProjectRunSettings> {
  const rows = await prisma.$queryRaw<Record<string, unknown>[]>`
    SELECT p."version" AS "settingsPolicyVersion", p."policy"::text AS "settingsPolicy",
      i."version" AS "settingsInstructionsVersion", i."text" AS "settingsInstructions",
      (SELECT COALESCE(json_agg(DISTINCT a."toolName")::text, '[]') FROM "AgentConversationAllow" a
        WHERE a."conversationId" = r."conversationId" AND a."revokedAt" IS NULL
          AND a."policyVersion" = COALESCE(r."policyVersion", 0)) AS "settingsAllowed"
    FROM "AgentRun" r
    JOIN "AgentConversation" c ON c."id" = r."conversationId"
    LEFT JOIN "AgentToolPolicyVersion" p ON p."projectId" = c."projectId" AND p."version" = r."policyVersion"
    LEFT JOIN "AgentInstructionsVersion" i ON i."projectId" = c."projectId" AND i."version" = r."instructionsVersion"
    WHERE r."id" = ${runId}`;
  return decodeRunSettings(rows[0] ?? {});
}

const author = { select: { id: true, name: true } } as const;

/** The newest tool permissions and instructions of a project, with who saved them and when. */
export async function loadAssistantSettings(prisma: PrismaClient, projectId: string) {
  const [policyRow, instructionsRow] = await Promise.all([
    prisma.agentToolPolicyVersion.findFirst({
      where: { projectId },
      orderBy: { version: 'desc' },
      include: { createdBy: author },
    }),
    prisma.agentInstructionsVersion.findFirst({
      where: { projectId },
      orderBy: { version: 'desc' },
      include: { createdBy: author },
    }),
  ]);
  const parsed = policyRow ? ToolPolicySchema.safeParse(policyRow.policy) : null;
  return {
    policy: {
      version: policyRow?.version ?? 0,
      policy: parsed?.success ? parsed.data : DEFAULT_POLICY,
      /** The stored version does not read as a policy: shown as the defaults, and a save replaces it. */
      unreadable: parsed ? !parsed.success : false,
      savedAt: policyRow?.createdAt ?? null,
      savedBy: policyRow?.createdBy ?? null,
    },
    instructions: {
      version: instructionsRow?.version ?? 0,
      text: instructionsRow?.text ?? '',
      savedAt: instructionsRow?.createdAt ?? null,
      savedBy: instructionsRow?.createdBy ?? null,
    },
  };
}

/**
 * Saves a new version after `baseVersion`, only while `baseVersion` is the newest (0: none yet):
 * one statement, so of two saves from the same version exactly one is stored on every instance.
 * The version stored, or null when another save came first.
 */
export async function insertPolicyVersion(
  prisma: PrismaClient,
  input: { projectId: string; baseVersion: number; policy: ToolPolicy; changes: PolicyChanges; userId: string },
): Promise<number | null> {
  const rows = await prisma.$queryRaw<Array<{ version: number }>>`
    INSERT INTO "AgentToolPolicyVersion" ("id", "projectId", "version", "policy", "changes", "createdById")
    SELECT ${newId('tpv_')}, ${input.projectId}, ${input.baseVersion + 1}, ${JSON.stringify(input.policy)}::jsonb,
      ${JSON.stringify(input.changes)}::jsonb, ${input.userId}
    WHERE (SELECT COALESCE(max("version"), 0) FROM "AgentToolPolicyVersion" WHERE "projectId" = ${input.projectId}) = ${input.baseVersion}
    ON CONFLICT ("projectId", "version") DO NOTHING
    RETURNING "version"`;
  return rows[0]?.version ?? null;
}

/** The same for the instructions. */
export async function insertInstructionsVersion(
  prisma: PrismaClient,
  input: { projectId: string; baseVersion: number; text: string; userId: string },
): Promise<number | null> {
  const rows = await prisma.$queryRaw<Array<{ version: number }>>`
    INSERT INTO "AgentInstructionsVersion" ("id", "projectId", "version", "text", "createdById")
    SELECT ${newId('inv_')}, ${input.projectId}, ${input.baseVersion + 1}, ${input.text}, ${input.userId}
    WHERE (SELECT COALESCE(max("version"), 0) FROM "AgentInstructionsVersion" WHERE "projectId" = ${input.projectId}) = ${input.baseVersion}
    ON CONFLICT ("projectId", "version") DO NOTHING
    RETURNING "version"`;
  return rows[0]?.version ?? null;
}

export type SettingsHistoryEntry =
  | {
      kind: 'policy';
      version: number;
      at: Date;
      by: { id: string; name: string } | null;
      changes: PolicyChanges | null;
    }
  | {
      kind: 'instructions';
      version: number;
      at: Date;
      by: { id: string; name: string } | null;
      text: string;
    }
  | {
      kind: 'allow';
      id: string;
      toolName: string;
      conversationId: string;
      policyVersion: number;
      at: Date;
      by: { id: string; name: string } | null;
      revokedAt: Date | null;
      revokedBy: { id: string; name: string } | null;
    };

/**
 * The newest `take` changes of the project's assistant settings, newest first: versions of the tool
 * permissions (with what changed), versions of the instructions (with their text), and "always
 * allow" grants given in its conversations (and their revocation).
 */
export async function settingsHistory(
  prisma: PrismaClient,
  projectId: string,
  take: number,
): Promise<SettingsHistoryEntry[]> {
  const [policies, instructions, allows] = await Promise.all([
    prisma.agentToolPolicyVersion.findMany({
      where: { projectId },
      orderBy: { version: 'desc' },
      take,
      include: { createdBy: author },
    }),
    prisma.agentInstructionsVersion.findMany({
      where: { projectId },
      orderBy: { version: 'desc' },
      take,
      include: { createdBy: author },
    }),
    prisma.agentConversationAllow.findMany({
      where: { conversation: { projectId } },
      orderBy: { createdAt: 'desc' },
      take,
      include: { user: author, revokedBy: author },
    }),
  ]);
  const entries: SettingsHistoryEntry[] = [
    ...policies.map((p) => {
      const changes = PolicyChangesSchema.safeParse(p.changes);
      return {
        kind: 'policy' as const,
        version: p.version,
        at: p.createdAt,
        by: p.createdBy,
        changes: changes.success ? changes.data : null,
      };
    }),
    ...instructions.map((i) => ({
      kind: 'instructions' as const,
      version: i.version,
      at: i.createdAt,
      by: i.createdBy,
      text: i.text,
    })),
    ...allows.map((a) => ({
      kind: 'allow' as const,
      id: a.id,
      toolName: a.toolName,
      conversationId: a.conversationId,
      policyVersion: a.policyVersion,
      at: a.createdAt,
      by: a.user,
      revokedAt: a.revokedAt,
      revokedBy: a.revokedBy,
    })),
  ];
  return entries.sort((a, b) => b.at.getTime() - a.at.getTime()).slice(0, take);
}

/** The newest tool-permission version of a project (0: none saved). */
async function currentPolicyVersion(prisma: PrismaClient, projectId: string): Promise<number> {
  const row = await prisma.agentToolPolicyVersion.findFirst({
    where: { projectId },
    orderBy: { version: 'desc' },
    select: { version: true },
  });
  return row?.version ?? 0;
}

/**
 * The tools allowed for the rest of a conversation: the grants under the project's newest
 * tool-permission version that were not revoked (one per tool, the first given).
 */
export async function conversationAllowances(prisma: PrismaClient, projectId: string, conversationId: string) {
  const policyVersion = await currentPolicyVersion(prisma, projectId);
  const rows = await prisma.agentConversationAllow.findMany({
    where: { conversationId, policyVersion, revokedAt: null },
    orderBy: { createdAt: 'asc' },
    select: { toolName: true, createdAt: true },
  });
  const seen = new Set<string>();
  return {
    policyVersion,
    tools: rows.filter((r) => !seen.has(r.toolName) && seen.add(r.toolName)),
  };
}

/** Revokes every grant of `toolName` in the conversation (recording who and when); how many there were. */
export async function revokeAllowance(
  prisma: PrismaClient,
  input: { conversationId: string; toolName: string; userId: string },
): Promise<number> {
  const res = await prisma.agentConversationAllow.updateMany({
    where: { conversationId: input.conversationId, toolName: input.toolName, revokedAt: null },
    data: { revokedAt: new Date(), revokedById: input.userId },
  });
  return res.count;
}

/** The tool-permission and instruction versions a conversation's runs went by, with how many runs each. */
export async function settingsUsedBy(prisma: PrismaClient, conversationId: string) {
  const groups = await prisma.agentRun.groupBy({
    by: ['policyVersion', 'instructionsVersion'],
    where: { conversationId },
    _count: { _all: true },
    _min: { startedAt: true },
    orderBy: { _min: { startedAt: 'asc' } },
  });
  return groups.map((g) => ({
    policyVersion: g.policyVersion,
    instructionsVersion: g.instructionsVersion,
    runs: g._count._all,
  }));
}
