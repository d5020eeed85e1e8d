/**
 * A run survives the death of its instance. The instance running a run holds a lease on it (the
 * run row's `owner` and `leaseExpiresAt`, renewed by its heartbeat: persistence.ts). Every instance
 * looks, once a second and whenever another instance lets a run go (the drain's NOTIFY), for
 * RUNNING runs whose lease expired, and claims one at a time with `FOR UPDATE SKIP LOCKED`, so two
 * instances never claim the same run. The claim, one statement:
 * - bumps the run's `generation` (the fencing token: every write of the run is conditional on it,
 *   so the old owner, if it was only paused, can write nothing more and stops), takes the lease and
 *   counts the takeover;
 * - drops what the run streamed after its last checkpoint (the model step that was cut off, results
 *   that will be asked again) and the approvals it had not announced;
 * - revokes the run's MCP keys and stores a new one for the new owner.
 * The new owner goes on from the checkpoint (step-checkpoint.ts): its first event, `resumed`, tells
 * every watcher what of the run is kept; then it settles the stored step's calls that have no
 * result (the product's tools return the stored result of a call that already ran: the ledger) and
 * asks the model again for the step that was cut off, and only for it. Its positions start above
 * anything the old generation may have sent (`generationBase`), so watchers see them increase.
 *
 * A run taken over more than LIMITS.maxTakeovers times ends with RUN_TAKEOVER_LIMIT; Stop pressed
 * while no instance ran it ends it as cancelled. A run waiting for an approval or an answer is not
 * RUNNING: it holds no lease and is never taken over. On the embedded database one process owns
 * the data: at its start it takes over every run a previous process left running.
 */
import {
  agentKeyMaterial,
  childLog,
  describeError,
  env,
  getDb,
  isDraining,
  loadProjectMember,
  newId,
  Prisma,
  type PrismaClient,
  driverOf,
  type ProjectMember,
} from '../host';
import { eventsAfter, expand, type PositionedEvent } from '../compact';
import { CUSTOM_EVENTS, LIMITS } from '../constants';
import { AGENT_ERRORS, AgentRefusal } from '../error-codes';
import { foldEvents } from '../fold';
import type { AgentEvent, ConversationView, PageContext } from '../schema';
import { decisionsOf, settleInterrupt } from './human-in-the-loop';
import { RunTrace, tracer, traceIdOf } from './instrumentation';
import { fanOut } from './fan-out';
import { LiveRun, ownerId, registerRun } from './live';
import { conversationReads, historyWindow, loadRunRows, NOW, type RunInput } from './persistence';
import { maskOptionsOf } from './data-policy';
import { runToolPolicy } from './policy';
import { sendUserMessage } from './run';
import { runDeps } from './run-deps';
import { runSettingsOfRun } from './settings-store';
import { type AgentStart, type RunBeginning, runToEnd } from './run-to-end';
import { claimer } from './takeover-state';
import type { Usage } from './usage';

/** A run this instance just claimed, as the claim statement returns it. */
interface ClaimedRun {
  id: string;
  conversationId: string;
  userId: string;
  projectId: string;
  generation: number;
  takeovers: number;
  cancelRequested: boolean;
  input: RunInput;
  seqFrom: number;
  checkpointPos: number | null;
  checkpointSteps: number;
  checkpointFinal: boolean;
  checkpointUsage: Usage | null;
  resumedFromId: string | null;
  /** Characters of assistant text and tool-call arguments dropped (the step that was cut off). */
  lostChars: number;
  /** The last row position kept (where this generation's rows go on). */
  keptSeq: number | null;
}

/**
 * Claims one run whose lease expired (or, `embedded`, any run this process does not own) and
 * prepares it for its new owner (see the file comment). Null when there is none.
 */
async function claimOne(
  prisma: PrismaClient,
  input: { owner: string; leaseSeconds: number; keyTtlSeconds: number; embedded: boolean },
): Promise<{ run: ClaimedRun; key: { id: string; secret: string } } | null> {
  const key = agentKeyMaterial('takeover', input.keyTtlSeconds);
  const expired = input.embedded
    ? Prisma.sql`true`
    : Prisma.sql`(r."leaseExpiresAt" IS NULL OR r."leaseExpiresAt" < ${NOW})`;
  const rows = await driverOf(prisma).queryRows<ClaimedRun>(Prisma.sql`
    WITH target AS (
      SELECT r."id" FROM "AgentRun" r
      WHERE r."status" = 'RUNNING' AND r."input" IS NOT NULL AND ${expired}
        AND r."owner" IS DISTINCT FROM ${input.owner}
      ORDER BY r."leaseExpiresAt" NULLS FIRST
      LIMIT 1
      FOR UPDATE SKIP LOCKED
    ),
    claimed AS (
      UPDATE "AgentRun" r SET "generation" = r."generation" + 1, "owner" = ${input.owner},
        "leaseExpiresAt" = ${NOW} + make_interval(secs => ${input.leaseSeconds}::int), "lastHeartbeatAt" = ${NOW},
        "takeovers" = r."takeovers" + 1
      FROM target WHERE r."id" = target."id"
      RETURNING r.*
    ),
    dropped AS (
      DELETE FROM "AgentEvent" e USING claimed c
      WHERE e."runId" = c."id" AND (e."payload"->>'pos')::double precision > COALESCE(c."checkpointPos", 1)
      RETURNING e."payload"
    ),
    unannounced AS (
      DELETE FROM "AgentPendingApproval" a USING claimed c WHERE a."runId" = c."id" AND a."status" = 'PENDING'
    ),
    revoked AS (
      UPDATE "ApiKey" k SET "revokedAt" = ${NOW} FROM claimed c WHERE k."runId" = c."id" AND k."revokedAt" IS NULL
    ),
    conv AS (
      SELECT v."id", v."projectId" FROM "AgentConversation" v JOIN claimed c ON c."conversationId" = v."id"
    ),
    "key" AS (
      INSERT INTO "ApiKey" ("id", "kind", "name", "publicKey", "secretHash", "projectId", "userId", "runId", "expiresAt")
      SELECT ${key.row.id}, 'IN_APP_AGENT', 'in-app agent run ' || c."id", ${key.row.publicKey}, ${key.row.secretHash},
        conv."projectId", c."userId", c."id", ${NOW} + make_interval(secs => ${input.keyTtlSeconds}::int)
      FROM claimed c JOIN conv ON conv."id" = c."conversationId"
    )
    SELECT c."id", c."conversationId", c."userId", conv."projectId", c."generation", c."takeovers",
      c."cancelRequested", c."input", c."seqFrom", c."checkpointPos", c."checkpointSteps", c."checkpointFinal",
      c."checkpointUsage", c."resumedFromId",
      (SELECT COALESCE(sum(length(COALESCE(d."payload"->>'content', '')) + length(COALESCE(d."payload"->>'args', ''))), 0)::int
        FROM dropped d
        WHERE (d."payload"->>'type' = 'TEXT_MESSAGE' AND d."payload"->>'role' = 'assistant')
          OR d."payload"->>'type' = 'TOOL_CALL') AS "lostChars",
      (SELECT max(e."seq") FROM "AgentEvent" e
        WHERE e."runId" = c."id" AND (e."payload"->>'pos')::double precision <= COALESCE(c."checkpointPos", 1)) AS "keptSeq"
    FROM claimed c JOIN conv ON conv."id" = c."conversationId"`);
  const run = rows[0];
  return run ? { run, key: { id: key.row.id, secret: key.secret } } : null;
}

/** The rows of a run kept at its claim, as events, and what of the run they keep. */
function keptOf(events: PositionedEvent[]): { messageIds: string[]; toolCallIds: string[] } {
  const messageIds: string[] = [];
  const toolCallIds: string[] = [];
  for (const { event: e } of events) {
    if (e.type === 'TEXT_MESSAGE_START' || e.type === 'TOOL_CALL_RESULT') messageIds.push(e.messageId);
    else if (e.type === 'TOOL_CALL_START') toolCallIds.push(e.toolCallId);
  }
  return { messageIds, toolCallIds };
}

/** The calls of the run's stored steps that have no result yet (in the order they were made). */
function openCallsOf(view: ConversationView, runId: string): NonNullable<AgentStart['openCalls']> {
  const done = new Set<string>();
  for (const m of view.messages) if (m.role === 'tool') done.add(m.toolCallId);
  const open: NonNullable<AgentStart['openCalls']> = [];
  for (const m of view.messages) {
    if (m.role !== 'assistant' || m.runId !== runId) continue;
    for (const tc of m.toolCalls) {
      if (done.has(tc.id)) continue;
      let args: Record<string, unknown> = {};
      try {
        args = JSON.parse(tc.args || '{}') as Record<string, unknown>;
      } catch {
        args = {};
      }
      open.push({ toolCallId: tc.id, toolName: tc.name, args });
    }
  }
  return open;
}

/**
 * How a run taken over begins: the conversation's history and this run's kept rows, then, by what
 * was stored, the end at once (too many takeovers, Stop pressed meanwhile, the last step stored),
 * the beginning again (no step stored yet: the user's message, or the answered interrupts, sent
 * again), or the stored step's open calls, and the model goes on.
 */
function takeoverBeginning(input: {
  prisma: PrismaClient;
  claim: ClaimedRun;
  kept: PositionedEvent[];
  member: ProjectMember | null;
  trace: RunTrace;
  contextTokens: number;
  /** The project settings the run went by could not be read again: it ends with SETTINGS_UNREADABLE. */
  settingsUnreadable: boolean;
}): RunBeginning {
  const { prisma, claim, trace } = input;
  return async ({ send, mcp, keyId, mark, references }) => {
    const [stored, readSoFar] = await Promise.all([
      historyWindow(prisma, claim.conversationId, { excludeRunId: claim.id, budgetChars: input.contextTokens * 6 }),
      conversationReads(prisma, claim.conversationId),
    ]);
    mark('historyLoaded');
    const history = foldEvents(
      input.kept.map((k) => k.event),
      stored,
    );
    const base: AgentStart = {
      history,
      readSoFar,
      stepsDone: claim.checkpointSteps,
      // (Past the takeover limit the run only ends: nothing stored is read that could keep it from ending.)
      usageBefore: claim.takeovers > LIMITS.maxTakeovers ? {} : (claim.checkpointUsage ?? {}),
      ...(claim.lostChars > 0 ? { lostOutputChars: claim.lostChars } : {}),
    };
    if (!input.member) {
      return { ...base, error: { code: 'FORBIDDEN', message: 'You are no longer a member of this project.' } };
    }
    if (input.settingsUnreadable) {
      return {
        ...base,
        error: { code: 'SETTINGS_UNREADABLE', message: AGENT_ERRORS.SETTINGS_UNREADABLE.text },
      };
    }
    if (claim.takeovers > LIMITS.maxTakeovers) {
      return {
        ...base,
        error: {
          code: 'RUN_TAKEOVER_LIMIT',
          message: 'The servers writing this answer stopped several times, so it was ended. Please try again.',
        },
      };
    }
    if (claim.cancelRequested) return { ...base, cancelled: true };
    if (claim.checkpointPos === null) {
      // No model step was stored: the run begins again as its first generation did.
      if (claim.resumedFromId) {
        for (const d of await decisionsOf(prisma, claim.resumedFromId))
          await settleInterrupt(d, { send, trace, prisma, projectId: claim.projectId, mcp, keyId });
      } else {
        await sendUserMessage(send, {
          prisma,
          conversationId: claim.conversationId,
          stored,
          parts: claim.input.userMessage ?? [],
          messageId: claim.input.userMessageId ?? newId('msg_'),
          references,
        });
      }
      return base;
    }
    if (claim.checkpointFinal) return { ...base, complete: true };
    return { ...base, openCalls: openCallsOf(history, claim.id) };
  };
}

/** Goes on with a run this instance claimed, to its end (never throws). */
async function goOn(prisma: PrismaClient, claimed: { run: ClaimedRun; key: { id: string; secret: string } }) {
  const { run: claim, key } = claimed;
  const log = childLog({ runId: claim.id, conversationId: claim.conversationId, projectId: claim.projectId });
  const deps = runDeps();
  const model = deps.model();
  // Who asks, the settings the run went by (its recorded versions) and how its rows are masked.
  const [member, settings, mask] = await Promise.all([
    loadProjectMember(prisma, claim.projectId, claim.userId),
    runSettingsOfRun(prisma, claim.id).catch((err: unknown) => {
      if (err instanceof AgentRefusal) return null;
      throw err;
    }),
    maskOptionsOf(prisma, claim.projectId),
  ]);
  // What the earlier generations stored (the claim dropped the rest), as positioned events.
  const rows = await loadRunRows(prisma, claim.conversationId, claim.id);
  const positioned = eventsAfter(rows, 0, claim.conversationId);
  if (positioned === null) {
    // Rows without positions (written before positions existed): kept, but a watcher that saw less
    // of them is not sent them again (it sees them once the run ends, or on a reload after).
    log.error(
      { event: 'run.kept_unpositioned', rows: rows.length },
      'the stored steps of a run taken over have no positions',
    );
  }
  const kept = positioned ?? expand(rows).map((event) => ({ pos: 0, event }));
  const span = tracer().startSpan('in_app_agent.run', {
    attributes: {
      'project.id': claim.projectId,
      'conversation.id': claim.conversationId,
      'user.id': claim.userId,
      'model.provider': model.info.provider,
      'model.id': model.info.modelId,
      'run.generation': claim.generation,
    },
  });
  const trace = new RunTrace(span);
  trace.setRunId(claim.id);
  const recordedStart = kept.some((k) => k.event.type === 'RUN_STARTED');
  const started: AgentEvent = {
    type: 'RUN_STARTED',
    threadId: claim.conversationId,
    runId: claim.id,
    ...(claim.resumedFromId ? { parentRunId: claim.resumedFromId } : {}),
  };
  if (!recordedStart) kept.unshift({ pos: 1, event: started });
  // A watcher that saw less of the earlier generations than they stored (it attached after the
  // takeover, or its events were still on the way when the old owner died) gets the rest first.
  const earlier =
    positioned === null
      ? undefined
      : (after: number) => [
          ...(!recordedStart && after < 1 ? [{ pos: 1, event: started }] : []),
          ...(eventsAfter(rows, after, claim.conversationId) ?? []),
        ];
  const live = new LiveRun(
    { runId: claim.id, conversationId: claim.conversationId, projectId: claim.projectId, userId: claim.userId },
    claim.generation,
    earlier,
  );
  registerRun(live);
  const resumed: AgentEvent = {
    type: 'CUSTOM',
    name: CUSTOM_EVENTS.resumed,
    value: { generation: claim.generation, keep: keptOf(kept) },
  };
  log.warn(
    { event: 'run.taken_over', generation: claim.generation, takeovers: claim.takeovers, traceId: traceIdOf(span) },
    'took over a run whose instance stopped',
  );
  const policy = runToolPolicy(
    { role: member?.role ?? 'VIEWER', isAdmin: member?.user.isAdmin ?? false },
    {
      requireApproval: deps.settings.requireApproval,
      ...(settings ? { project: settings.policy, allowed: settings.allowed } : {}),
    },
  );
  await runToEnd({
    run: live,
    prisma,
    ids: { runId: claim.id, conversationId: claim.conversationId, projectId: claim.projectId, userId: claim.userId },
    generation: claim.generation,
    seqs: { seqFrom: claim.keptSeq ?? claim.seqFrom, seqTo: claim.seqFrom + LIMITS.runSeqBlock },
    key,
    trace,
    model,
    gateway: deps.gateway,
    settings: deps.settings,
    pageContext: (claim.input.pageContext ?? {}) as PageContext,
    member: member ?? {
      role: 'VIEWER',
      projectName: '',
      user: { id: claim.userId, name: '', email: '', isAdmin: false },
    },
    policy,
    instructions: settings?.instructions?.text ?? '',
    // The budgets are not read again: the run was admitted; its spend is counted when it ends.
    budgets: null,
    mask,
    firstEvent: resumed,
    begin: takeoverBeginning({
      prisma,
      claim,
      kept,
      member,
      trace,
      contextTokens: deps.settings.contextTokens,
      settingsUnreadable: settings === null,
    }),
    logFields: { takenOver: true, takeovers: claim.takeovers },
    mark: () => undefined,
    // A run whose first event was never stored gets its RUN_STARTED row first (not sent again).
    ...(recordedStart ? {} : { recordFirst: started }),
  });
}

/** Runs claimed per look: the rest wait for the next one (or another instance). */
const CLAIMS_PER_LOOK = 10;

/**
 * Looks for runs to take over now, and goes on with each one claimed. Resolves once the claims are
 * made (the runs go on). On the embedded database every run this process does not own is taken.
 */
async function takeOverRuns(prisma: PrismaClient, embedded: boolean): Promise<number> {
  if (claimer.running) {
    claimer.again = true;
    return 0;
  }
  claimer.running = true;
  let claimed = 0;
  try {
    do {
      claimer.again = false;
      const settings = runDeps().settings;
      for (let i = 0; i < CLAIMS_PER_LOOK && !isDraining(); i++) {
        const got = await claimOne(prisma, {
          owner: ownerId(),
          leaseSeconds: settings.leaseSeconds ?? LIMITS.leaseSeconds,
          keyTtlSeconds: settings.keyTtlSeconds,
          embedded,
        });
        if (!got) break;
        claimed += 1;
        void goOn(prisma, got).catch((err: unknown) =>
          childLog({ runId: got.run.id }).error(
            { event: 'run.takeover_failed', error: describeError(err) },
            'could not go on with a run taken over',
          ),
        );
      }
    } while (claimer.again && !isDraining());
  } finally {
    claimer.running = false;
  }
  return claimed;
}

/**
 * Starts looking for runs to take over (once per process): every `everyMs` (LIMITS.claimPollMs),
 * and at once when another instance lets a run go. On the embedded database, once at start.
 */
export async function startTakeovers(opts: { everyMs?: number } = {}): Promise<void> {
  if (claimer.started) return;
  claimer.started = true;
  const db = await getDb();
  const embedded = db.kind === 'pglite';
  const look = () =>
    takeOverRuns(db.prisma, embedded).catch((err: unknown) =>
      childLog({ job: 'takeovers' }).error({ event: 'takeover.failed', error: describeError(err) }, 'takeover failed'),
    );
  if (embedded) {
    // One process owns the data: the runs a previous process left running are taken over now.
    await look();
    return;
  }
  fanOut(env().DATABASE_URL).onReleased(() => void look());
  claimer.timer = setInterval(() => void look(), opts.everyMs ?? LIMITS.claimPollMs);
  claimer.timer.unref();
  void look();
}
