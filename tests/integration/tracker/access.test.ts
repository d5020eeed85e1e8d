// Authorization of every tRPC procedure of the product (tracker, MCP administration, in-app agent)
// over real HTTP: a user of another project gets NOT_FOUND, a role without the scope gets
// FORBIDDEN, every role holding it succeeds. The case table is checked against appRouter's
// procedures, so a new procedure anywhere in the API without a case fails here.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentEvent } from '@/features/in-app-agent/schema';
import { openRunRow, replayConversation, RunRecorder } from '@/features/in-app-agent/server/persistence';
import { KEY_SCOPES } from '@/features/mcp/key-scopes';
import { createProjectKey } from '@/server/api-keys';
import { appRouter } from '@/server/api-root';
import { getPrisma } from '@/server/db';
import { newId } from '@/server/ids';
import { hasProjectAccess, ROLES, type Role, type Scope } from '@/server/rbac';
import { createIssue, createProject, createUser, type TestProject, type TestUser } from '../../helpers/fixtures';
import { startTestServer, type TestServer } from '../../helpers/http';
import { errorCode, trpcClient } from '../../helpers/trpc';

type Client = ReturnType<typeof trpcClient>;

/** Fresh targets for one call, so destructive procedures can run once per role. */
interface Fx {
  projectId: string;
  issueNumber: number;
  keyId: string;
  /** A VIEWER member that may be changed or removed. */
  memberId: string;
  /** A registered user who is not a member yet. */
  outsiderEmail: string;
  /** An assistant conversation of the calling role's user (the OWNER's for non-members)… */
  conversationId: string;
  /** …and the id of the assistant's answer in it… */
  messageId: string;
  /** …and of its run. */
  runId: string;
  /** An app connected by the calling role's user (the OWNER's for non-members) to the project. */
  grantId: string;
  /** An evaluation dataset with one case and two finished experiments. */
  datasetId: string;
  caseId: string;
  experimentIds: [string, string];
}

/** An evaluation dataset of the project: one case (the conversation's turn) and two finished experiments. */
async function evalFixtures(projectId: string, userId: string, conversationId: string) {
  const prisma = await getPrisma();
  const datasetId = newId('ds_');
  const caseId = newId('case_');
  await prisma.agentEvalDataset.create({ data: { id: datasetId, projectId, name: `Access ${datasetId}` } });
  await prisma.agentEvalCase.create({
    data: {
      id: caseId,
      datasetId,
      source: 'conversation',
      conversationId,
      messageId: newId('msg_'),
      userId,
      data: {
        history: [],
        decisions: {},
        userMessage: { text: 'Which issues are open?' },
        pageContext: {},
        original: { answer: 'None.', toolCalls: [], model: null, usage: null },
        rating: null,
        reasons: [],
        comment: null,
      },
    },
  });
  const experimentIds: [string, string] = [newId('exp_'), newId('exp_')];
  for (const id of experimentIds)
    await prisma.agentEvalExperiment.create({
      data: {
        id,
        datasetId,
        projectId,
        name: id,
        candidate: { name: id },
        systemPromptVersion: '000000000000',
        status: 'COMPLETED',
        total: 1,
      },
    });
  return { datasetId, caseId, experimentIds };
}

/** An app connected by `userId` to the project through MCP authorization (a client and a grant). */
async function connectedAppOf(projectId: string, userId: string): Promise<string> {
  const prisma = await getPrisma();
  const clientId = newId('mcpc_');
  await prisma.mcpOAuthClient.create({
    data: { id: clientId, kind: 'REGISTERED', name: 'Access app', redirectUris: ['http://127.0.0.1/cb'] },
  });
  const grantId = newId('gr_');
  await prisma.mcpOAuthGrant.create({
    data: {
      id: grantId,
      clientId,
      userId,
      projectId,
      scopes: ['issues:read'],
      resource: 'https://t.example/api/public/mcp',
    },
  });
  return grantId;
}

/** A finished assistant conversation of `userId`, written through the module's own recorder. */
async function conversationOf(
  projectId: string,
  userId: string,
): Promise<{ conversationId: string; messageId: string; runId: string }> {
  const prisma = await getPrisma();
  const opened = await openRunRow(prisma, {
    runId: newId('run_'),
    conversationId: newId('cv_'),
    projectId,
    userId,
    modelId: 'test',
    create: { title: 'Access check' },
  });
  if (!opened) throw new Error('could not open a run');
  const conversation = { id: opened.conversationId };
  const run = { id: opened.runId };
  const recorder = new RunRecorder(prisma, conversation.id, run.id, opened);
  const events: AgentEvent[] = [
    { type: 'RUN_STARTED', threadId: conversation.id, runId: run.id },
    { type: 'TEXT_MESSAGE_START', messageId: newId('msg_'), role: 'user' },
    { type: 'TEXT_MESSAGE_CONTENT', messageId: '', delta: 'How many issues are open?' },
    { type: 'TEXT_MESSAGE_END', messageId: '' },
    { type: 'TEXT_MESSAGE_START', messageId: newId('msg_'), role: 'assistant' },
    { type: 'TEXT_MESSAGE_CONTENT', messageId: '', delta: 'Three.' },
    { type: 'TEXT_MESSAGE_END', messageId: '' },
    { type: 'RUN_FINISHED', threadId: conversation.id, runId: run.id, outcome: { type: 'success' } },
  ] as AgentEvent[];
  // Content and end events belong to the message started just before them.
  let current = '';
  for (const e of events) {
    if (e.type === 'TEXT_MESSAGE_START') current = e.messageId;
    else if (e.type === 'TEXT_MESSAGE_CONTENT' || e.type === 'TEXT_MESSAGE_END')
      (e as { messageId: string }).messageId = current;
    recorder.record(e);
  }
  await recorder.finish({ status: 'COMPLETED', outcome: { type: 'success' } });
  const view = await replayConversation(prisma, conversation.id);
  const answer = view.messages.find((m) => m.role === 'assistant');
  if (!answer) throw new Error('the recorded conversation has no assistant message');
  return { conversationId: conversation.id, messageId: answer.id, runId: run.id };
}

async function fixtures(p: TestProject, role: Role = 'OWNER'): Promise<Fx> {
  const prisma = await getPrisma();
  const issue = await createIssue(p.id, { title: `Target ${newId('t')}`, body: 'body', reporterId: p.users.OWNER.id });
  const key = await createProjectKey(prisma, {
    projectId: p.id,
    name: 'target key',
    createdById: p.users.OWNER.id,
    scopes: KEY_SCOPES,
  });
  const member = await createUser('Target');
  await prisma.projectMembership.create({
    data: { id: newId('m_'), projectId: p.id, userId: member.id, role: 'VIEWER' },
  });
  const outsider = await createUser('Invitee');
  const conversation = await conversationOf(p.id, p.users[role].id);
  // create_issue allowed for the rest of it (what agent.allowances.revoke takes back).
  await prisma.agentConversationAllow.create({
    data: {
      id: newId('alw_'),
      conversationId: conversation.conversationId,
      userId: p.users[role].id,
      toolName: 'create_issue',
      policyVersion: 0,
    },
  });
  const grantId = await connectedAppOf(p.id, p.users[role].id);
  return {
    grantId,
    ...(await evalFixtures(p.id, p.users[role].id, conversation.conversationId)),
    projectId: p.id,
    issueNumber: issue.number,
    keyId: key.key.id,
    memberId: member.id,
    outsiderEmail: outsider.email,
    ...conversation,
  };
}

interface Case {
  /** The scope the procedure requires; null: any signed-in user (not project-scoped). */
  scope: Scope | null;
  call: (c: Client, fx: Fx) => Promise<unknown>;
}

const CASES: Record<string, Case> = {
  // --- tracker ---------------------------------------------------------------------------------
  'tracker.projects.list': { scope: null, call: (c) => c.tracker.projects.list.query() },
  'tracker.projects.get': {
    scope: 'project:read',
    call: (c, f) => c.tracker.projects.get.query({ projectId: f.projectId }),
  },
  'tracker.projects.access': {
    scope: 'project:read',
    call: (c, f) => c.tracker.projects.access.query({ projectId: f.projectId }),
  },
  'tracker.issues.list': {
    scope: 'issues:read',
    call: (c, f) => c.tracker.issues.list.query({ projectId: f.projectId }),
  },
  'tracker.issues.search': {
    scope: 'issues:read',
    call: (c, f) => c.tracker.issues.search.query({ projectId: f.projectId, query: 'Target' }),
  },
  'tracker.issues.get': {
    scope: 'issues:read',
    call: (c, f) => c.tracker.issues.get.query({ projectId: f.projectId, number: f.issueNumber }),
  },
  'tracker.issues.create': {
    scope: 'issues:write',
    call: (c, f) => c.tracker.issues.create.mutate({ projectId: f.projectId, title: 'New one' }),
  },
  'tracker.issues.update': {
    scope: 'issues:write',
    call: (c, f) => c.tracker.issues.update.mutate({ projectId: f.projectId, number: f.issueNumber, title: 'Renamed' }),
  },
  'tracker.issues.assign': {
    scope: 'issues:write',
    call: (c, f) =>
      c.tracker.issues.assign.mutate({ projectId: f.projectId, number: f.issueNumber, assigneeId: f.memberId }),
  },
  'tracker.issues.close': {
    scope: 'issues:write',
    call: (c, f) => c.tracker.issues.close.mutate({ projectId: f.projectId, number: f.issueNumber }),
  },
  'tracker.issues.reopen': {
    scope: 'issues:write',
    call: (c, f) => c.tracker.issues.reopen.mutate({ projectId: f.projectId, number: f.issueNumber }),
  },
  'tracker.issues.delete': {
    scope: 'issues:delete',
    call: (c, f) => c.tracker.issues.delete.mutate({ projectId: f.projectId, number: f.issueNumber }),
  },
  'tracker.comments.add': {
    scope: 'comments:write',
    call: (c, f) => c.tracker.comments.add.mutate({ projectId: f.projectId, number: f.issueNumber, body: 'A comment' }),
  },
  'tracker.members.list': {
    scope: 'members:read',
    call: (c, f) => c.tracker.members.list.query({ projectId: f.projectId }),
  },
  'tracker.members.add': {
    scope: 'members:manage',
    call: (c, f) => c.tracker.members.add.mutate({ projectId: f.projectId, email: f.outsiderEmail, role: 'MEMBER' }),
  },
  'tracker.members.changeRole': {
    scope: 'members:manage',
    call: (c, f) => c.tracker.members.changeRole.mutate({ projectId: f.projectId, userId: f.memberId, role: 'MEMBER' }),
  },
  'tracker.members.remove': {
    scope: 'members:manage',
    call: (c, f) => c.tracker.members.remove.mutate({ projectId: f.projectId, userId: f.memberId }),
  },
  'tracker.labels.list': {
    scope: 'issues:read',
    call: (c, f) => c.tracker.labels.list.query({ projectId: f.projectId }),
  },
  'tracker.apiKeys.list': {
    scope: 'apiKeys:manage',
    call: (c, f) => c.tracker.apiKeys.list.query({ projectId: f.projectId }),
  },
  'tracker.apiKeys.create': {
    scope: 'apiKeys:manage',
    call: (c, f) => c.tracker.apiKeys.create.mutate({ projectId: f.projectId, name: 'ci', scopes: ['issues:read'] }),
  },
  'tracker.apiKeys.revoke': {
    scope: 'apiKeys:manage',
    call: (c, f) => c.tracker.apiKeys.revoke.mutate({ projectId: f.projectId, keyId: f.keyId }),
  },
  'tracker.settings.get': {
    scope: 'members:manage',
    call: (c, f) => c.tracker.settings.get.query({ projectId: f.projectId }),
  },
  'tracker.settings.setWebhook': {
    scope: 'members:manage',
    call: (c, f) =>
      c.tracker.settings.setWebhook.mutate({ projectId: f.projectId, url: 'https://hooks.example.com/x' }),
  },
  // --- MCP administration ----------------------------------------------------------------------
  'mcp.audit.list': { scope: 'audit:read', call: (c, f) => c.mcp.audit.list.query({ projectId: f.projectId }) },
  'mcp.audit.facets': { scope: 'audit:read', call: (c, f) => c.mcp.audit.facets.query({ projectId: f.projectId }) },
  'mcp.tools': { scope: 'project:read', call: (c, f) => c.mcp.tools.query({ projectId: f.projectId }) },
  // Connected apps: the caller's own (any signed-in user), and a project's (admins).
  'mcp.connectedApps.mine': { scope: null, call: (c) => c.mcp.connectedApps.mine.query() },
  'mcp.connectedApps.revokeMine': {
    scope: null,
    call: (c, f) => c.mcp.connectedApps.revokeMine.mutate({ grantId: f.grantId }),
  },
  'mcp.connectedApps.project': {
    scope: 'apiKeys:manage',
    call: (c, f) => c.mcp.connectedApps.project.query({ projectId: f.projectId }),
  },
  'mcp.connectedApps.revokeInProject': {
    scope: 'apiKeys:manage',
    call: (c, f) => c.mcp.connectedApps.revokeInProject.mutate({ projectId: f.projectId, grantId: f.grantId }),
  },
  // --- in-app agent (conversations.* and feedback act on the caller's own conversation) ----------
  'agent.conversations.list': {
    scope: 'agent:use',
    call: (c, f) => c.agent.conversations.list.query({ projectId: f.projectId }),
  },
  'agent.conversations.get': {
    scope: 'agent:use',
    call: (c, f) => c.agent.conversations.get.query({ projectId: f.projectId, conversationId: f.conversationId }),
  },
  'agent.conversations.older': {
    scope: 'agent:use',
    call: (c, f) =>
      c.agent.conversations.older.query({ projectId: f.projectId, conversationId: f.conversationId, before: f.runId }),
  },
  'agent.conversations.selectVersion': {
    scope: 'agent:use',
    call: (c, f) =>
      c.agent.conversations.selectVersion.mutate({
        projectId: f.projectId,
        conversationId: f.conversationId,
        runId: f.runId,
      }),
  },
  'agent.conversations.rename': {
    scope: 'agent:use',
    call: (c, f) =>
      c.agent.conversations.rename.mutate({
        projectId: f.projectId,
        conversationId: f.conversationId,
        title: 'Renamed',
      }),
  },
  'agent.conversations.delete': {
    scope: 'agent:use',
    call: (c, f) => c.agent.conversations.delete.mutate({ projectId: f.projectId, conversationId: f.conversationId }),
  },
  'agent.conversations.restore': {
    scope: 'agent:use',
    call: (c, f) => c.agent.conversations.restore.mutate({ projectId: f.projectId, conversationId: f.conversationId }),
  },
  'agent.feedback.submit': {
    scope: 'agent:use',
    call: (c, f) =>
      c.agent.feedback.submit.mutate({
        projectId: f.projectId,
        conversationId: f.conversationId,
        messageId: f.messageId,
        value: 1,
      }),
  },
  'agent.model.info': { scope: 'agent:use', call: (c, f) => c.agent.model.info.query({ projectId: f.projectId }) },
  'agent.review.list': { scope: 'agent:review', call: (c, f) => c.agent.review.list.query({ projectId: f.projectId }) },
  'agent.review.get': {
    scope: 'agent:review',
    call: (c, f) => c.agent.review.get.query({ projectId: f.projectId, conversationId: f.conversationId }),
  },
  'agent.review.usage': {
    scope: 'agent:review',
    call: (c, f) => c.agent.review.usage.query({ projectId: f.projectId }),
  },
  'agent.review.older': {
    scope: 'agent:review',
    call: (c, f) =>
      c.agent.review.older.query({ projectId: f.projectId, conversationId: f.conversationId, before: f.runId }),
  },
  'agent.review.export': {
    scope: 'agent:review',
    call: (c, f) => c.agent.review.export.query({ projectId: f.projectId, conversationId: f.conversationId }),
  },
  // Saves that change nothing (no version written): the shared project keeps the defaults.
  'agent.settings.get': {
    scope: 'agent:manage',
    call: (c, f) => c.agent.settings.get.query({ projectId: f.projectId }),
  },
  'agent.settings.savePolicy': {
    scope: 'agent:manage',
    call: (c, f) =>
      c.agent.settings.savePolicy.mutate({ projectId: f.projectId, baseVersion: 0, policy: { cells: {}, rules: {} } }),
  },
  'agent.settings.saveInstructions': {
    scope: 'agent:manage',
    call: (c, f) => c.agent.settings.saveInstructions.mutate({ projectId: f.projectId, baseVersion: 0, text: '' }),
  },
  'agent.settings.history': {
    scope: 'audit:read',
    call: (c, f) => c.agent.settings.history.query({ projectId: f.projectId }),
  },
  'agent.allowances.list': {
    scope: 'agent:use',
    call: (c, f) => c.agent.allowances.list.query({ projectId: f.projectId, conversationId: f.conversationId }),
  },
  'agent.allowances.revoke': {
    scope: 'agent:use',
    call: (c, f) =>
      c.agent.allowances.revoke.mutate({
        projectId: f.projectId,
        conversationId: f.conversationId,
        toolName: 'create_issue',
      }),
  },
  'agent.budgets.get': { scope: 'agent:review', call: (c, f) => c.agent.budgets.get.query({ projectId: f.projectId }) },
  'agent.budgets.set': {
    scope: 'agent:manage',
    call: (c, f) => c.agent.budgets.set.mutate({ projectId: f.projectId, budgets: { MEMBER_DAY: null } }),
  },
  'agent.dataPolicy.get': {
    scope: 'agent:review',
    call: (c, f) => c.agent.dataPolicy.get.query({ projectId: f.projectId }),
  },
  'agent.dataPolicy.set': {
    scope: 'agent:manage',
    call: (c, f) => c.agent.dataPolicy.set.mutate({ projectId: f.projectId, retentionDays: null, maskContacts: false }),
  },
  'agent.memberData.people': {
    scope: 'agent:manage',
    call: (c, f) => c.agent.memberData.people.query({ projectId: f.projectId }),
  },
  'agent.memberData.export': {
    scope: 'agent:manage',
    call: (c, f) => c.agent.memberData.export.query({ projectId: f.projectId, userId: f.memberId }),
  },
  'agent.memberData.delete': {
    scope: 'agent:manage',
    call: (c, f) => c.agent.memberData.delete.mutate({ projectId: f.projectId, userId: f.memberId }),
  },
  'agent.waiting.list': { scope: 'agent:use', call: (c, f) => c.agent.waiting.list.query({ projectId: f.projectId }) },
  'agent.eval.info': { scope: 'agent:review', call: (c, f) => c.agent.eval.info.query({ projectId: f.projectId }) },
  'agent.eval.datasets.list': {
    scope: 'agent:review',
    call: (c, f) => c.agent.eval.datasets.list.query({ projectId: f.projectId }),
  },
  'agent.eval.datasets.get': {
    scope: 'agent:review',
    call: (c, f) => c.agent.eval.datasets.get.query({ projectId: f.projectId, datasetId: f.datasetId }),
  },
  'agent.eval.datasets.create': {
    scope: 'agent:manage',
    call: (c, f) => c.agent.eval.datasets.create.mutate({ projectId: f.projectId, name: `New ${f.datasetId}` }),
  },
  'agent.eval.datasets.addRated': {
    scope: 'agent:manage',
    call: (c, f) =>
      c.agent.eval.datasets.addRated.mutate({ projectId: f.projectId, datasetId: f.datasetId, filter: { rating: 1 } }),
  },
  'agent.eval.datasets.addConversation': {
    scope: 'agent:manage',
    call: (c, f) =>
      c.agent.eval.datasets.addConversation.mutate({
        projectId: f.projectId,
        datasetId: f.datasetId,
        conversationId: f.conversationId,
      }),
  },
  'agent.eval.datasets.import': {
    scope: 'agent:manage',
    call: (c, f) =>
      c.agent.eval.datasets.import.mutate({ projectId: f.projectId, datasetId: f.datasetId, jsonl: 'not json\n' }),
  },
  'agent.eval.datasets.delete': {
    scope: 'agent:manage',
    call: (c, f) => c.agent.eval.datasets.delete.mutate({ projectId: f.projectId, datasetId: f.datasetId }),
  },
  'agent.eval.cases.setExpectations': {
    scope: 'agent:manage',
    call: (c, f) =>
      c.agent.eval.cases.setExpectations.mutate({
        projectId: f.projectId,
        caseId: f.caseId,
        expectations: [{ kind: 'asks_back' }],
      }),
  },
  'agent.eval.cases.remove': {
    scope: 'agent:manage',
    call: (c, f) => c.agent.eval.cases.remove.mutate({ projectId: f.projectId, caseId: f.caseId }),
  },
  'agent.eval.experiments.estimate': {
    scope: 'agent:manage',
    call: (c, f) =>
      c.agent.eval.experiments.estimate.query({
        projectId: f.projectId,
        datasetId: f.datasetId,
        candidate: { name: 'x' },
      }),
  },
  'agent.eval.experiments.start': {
    scope: 'agent:manage',
    // One case on the offline demo model: it ends within moments.
    call: (c, f) =>
      c.agent.eval.experiments.start.mutate({
        projectId: f.projectId,
        datasetId: f.datasetId,
        candidate: { name: 'x' },
      }),
  },
  'agent.eval.experiments.stop': {
    scope: 'agent:manage',
    call: (c, f) => c.agent.eval.experiments.stop.mutate({ projectId: f.projectId, experimentId: f.experimentIds[0] }),
  },
  'agent.eval.experiments.get': {
    scope: 'agent:review',
    call: (c, f) => c.agent.eval.experiments.get.query({ projectId: f.projectId, experimentId: f.experimentIds[0] }),
  },
  'agent.eval.experiments.compare': {
    scope: 'agent:review',
    call: (c, f) =>
      c.agent.eval.experiments.compare.query({
        projectId: f.projectId,
        baseId: f.experimentIds[0],
        otherId: f.experimentIds[1],
      }),
  },
  'agent.eval.experiments.export': {
    scope: 'agent:review',
    call: (c, f) => c.agent.eval.experiments.export.query({ projectId: f.projectId, experimentId: f.experimentIds[0] }),
  },
};

let server: TestServer;
let project: TestProject;
let other: TestProject;
/** Targets for calls that must fail before touching anything (they stay valid throughout). */
let shared: Fx;
let loner: TestUser;

beforeAll(async () => {
  server = await startTestServer();
  project = await createProject('Access');
  other = await createProject('Other');
  shared = await fixtures(project);
  loner = await createUser('Loner');
});
afterAll(() => server?.close());

const client = (cookie?: string) => trpcClient(server.url, cookie);

describe('procedure authorization', () => {
  afterAll(async () => {
    // The calls that were refused changed nothing.
    const prisma = await getPrisma();
    const issue = await prisma.issue.findUniqueOrThrow({
      where: { projectId_number: { projectId: project.id, number: shared.issueNumber } },
    });
    expect(issue.title).toMatch(/^Target /);
    expect(issue.status).toBe('OPEN');
    expect(
      await prisma.issue.count({
        where: {
          projectId: project.id,
          title: 'New one',
          reporterId: { in: [other.users.OWNER.id, project.users.VIEWER.id, loner.id] },
        },
      }),
    ).toBe(0);
    expect((await prisma.apiKey.findUniqueOrThrow({ where: { id: shared.keyId } })).revokedAt).toBeNull();
    expect(
      (
        await prisma.projectMembership.findUniqueOrThrow({
          where: { projectId_userId: { projectId: project.id, userId: shared.memberId } },
        })
      ).role,
    ).toBe('VIEWER');
    const conversation = await prisma.agentConversation.findUniqueOrThrow({ where: { id: shared.conversationId } });
    expect(conversation).toMatchObject({ title: 'Access check', deletedAt: null });
    expect(await prisma.agentFeedback.count({ where: { conversationId: shared.conversationId } })).toBe(0);
    expect((await prisma.mcpOAuthGrant.findUniqueOrThrow({ where: { id: shared.grantId } })).revokedAt).toBeNull();
  });

  it('has a case for every procedure of the whole API, and no stale case', () => {
    const procedures = Object.keys(appRouter._def.procedures).sort();
    expect(procedures.length).toBeGreaterThan(30);
    expect(Object.keys(CASES).sort()).toEqual(procedures);
  });

  const projectCases = Object.entries(CASES).filter(([, c]) => c.scope !== null) as Array<
    [string, Case & { scope: Scope }]
  >;

  it.each(projectCases)('%s: a member of another project gets NOT_FOUND', async (_name, c) => {
    // The other project's OWNER holds every scope in their own project, and none here.
    expect(await errorCode(c.call(client(other.users.OWNER.cookie), shared))).toBe('NOT_FOUND');
  });

  it.each(projectCases)('%s: a user in no project gets NOT_FOUND', async (_name, c) => {
    expect(await errorCode(c.call(client(loner.cookie), shared))).toBe('NOT_FOUND');
  });

  it.each(Object.entries(CASES))('%s: unauthenticated gets UNAUTHORIZED', async (_name, c) => {
    expect(await errorCode(c.call(client(), shared))).toBe('UNAUTHORIZED');
  });

  const roleRows = projectCases.flatMap(([name, c]) =>
    ROLES.map((role) => [name, role, c] as [string, Role, Case & { scope: Scope }]),
  );

  it.each(roleRows)('%s as %s: allowed iff the role holds the scope', async (_name, role, c) => {
    const allowed = hasProjectAccess({ role }, c.scope);
    const code = await errorCode(
      c.call(client(project.users[role].cookie), allowed ? await fixtures(project, role) : shared),
    );
    expect(code).toBe(allowed ? null : 'FORBIDDEN');
  });

  it('projects.list works for every role and shows only the caller’s projects', async () => {
    for (const role of ROLES) {
      const list = await client(project.users[role].cookie).tracker.projects.list.query();
      expect(list.map((p) => [p.id, p.role])).toEqual([[project.id, role]]);
    }
  });
});

describe('ids of another project are NOT_FOUND inside one’s own project', () => {
  it('issue numbers that exist only elsewhere', async () => {
    const prisma = await getPrisma();
    const mine = await createProject('Mine');
    const theirs = await fixtures(project);
    await prisma.project.update({ where: { id: mine.id }, data: { issueCounter: 0 } });
    const owner = client(mine.users.OWNER.cookie);
    const args = { projectId: mine.id, number: theirs.issueNumber };
    expect(await errorCode(owner.tracker.issues.get.query(args))).toBe('NOT_FOUND');
    expect(await errorCode(owner.tracker.issues.update.mutate({ ...args, title: 'x' }))).toBe('NOT_FOUND');
    expect(await errorCode(owner.tracker.issues.close.mutate(args))).toBe('NOT_FOUND');
    expect(await errorCode(owner.tracker.issues.delete.mutate(args))).toBe('NOT_FOUND');
    expect(await errorCode(owner.tracker.comments.add.mutate({ ...args, body: 'hi' }))).toBe('NOT_FOUND');
    // The other project's issue is untouched.
    const still = await prisma.issue.findUnique({
      where: { projectId_number: { projectId: project.id, number: theirs.issueNumber } },
    });
    expect(still?.title).toMatch(/^Target /);
    expect(still?.status).toBe('OPEN');
  });

  it('an API key id of another project cannot be revoked', async () => {
    const prisma = await getPrisma();
    const theirs = await fixtures(project);
    const owner = client(other.users.OWNER.cookie);
    expect(await errorCode(owner.tracker.apiKeys.revoke.mutate({ projectId: other.id, keyId: theirs.keyId }))).toBe(
      'NOT_FOUND',
    );
    const key = await prisma.apiKey.findUniqueOrThrow({ where: { id: theirs.keyId } });
    expect(key.revokedAt).toBeNull();
  });

  it('a member of another project cannot be changed or removed through one’s own project', async () => {
    const prisma = await getPrisma();
    const theirs = await fixtures(project);
    const owner = client(other.users.OWNER.cookie);
    expect(
      await errorCode(
        owner.tracker.members.changeRole.mutate({ projectId: other.id, userId: theirs.memberId, role: 'ADMIN' }),
      ),
    ).toBe('NOT_FOUND');
    expect(await errorCode(owner.tracker.members.remove.mutate({ projectId: other.id, userId: theirs.memberId }))).toBe(
      'NOT_FOUND',
    );
    const m = await prisma.projectMembership.findUniqueOrThrow({
      where: { projectId_userId: { projectId: project.id, userId: theirs.memberId } },
    });
    expect(m.role).toBe('VIEWER');
  });

  it('assigning an issue to a user outside the project is refused', async () => {
    const fx = await fixtures(project);
    const outsider = other.users.MEMBER;
    const code = await errorCode(
      client(project.users.MEMBER.cookie).tracker.issues.assign.mutate({
        projectId: project.id,
        number: fx.issueNumber,
        assigneeId: outsider.id,
      }),
    );
    expect(code).toBe('BAD_REQUEST');
  });
});

describe('only owners manage owners', () => {
  it('an ADMIN cannot grant OWNER, change or remove an OWNER', async () => {
    const p = await createProject('Owners');
    const admin = client(p.users.ADMIN.cookie);
    const invitee = await createUser('Invitee');
    expect(
      await errorCode(admin.tracker.members.add.mutate({ projectId: p.id, email: invitee.email, role: 'OWNER' })),
    ).toBe('FORBIDDEN');
    expect(
      await errorCode(
        admin.tracker.members.changeRole.mutate({ projectId: p.id, userId: p.users.MEMBER.id, role: 'OWNER' }),
      ),
    ).toBe('FORBIDDEN');
    expect(
      await errorCode(
        admin.tracker.members.changeRole.mutate({ projectId: p.id, userId: p.users.OWNER.id, role: 'VIEWER' }),
      ),
    ).toBe('FORBIDDEN');
    expect(await errorCode(admin.tracker.members.remove.mutate({ projectId: p.id, userId: p.users.OWNER.id }))).toBe(
      'FORBIDDEN',
    );
    const members = await client(p.users.OWNER.cookie).tracker.members.list.query({ projectId: p.id });
    expect(members.find((m) => m.userId === p.users.OWNER.id)?.role).toBe('OWNER');
    expect(members.find((m) => m.userId === p.users.MEMBER.id)?.role).toBe('MEMBER');
    expect(members.some((m) => m.userId === invitee.id)).toBe(false);
    // An ADMIN may still manage non-owner roles.
    expect(
      await errorCode(
        admin.tracker.members.changeRole.mutate({ projectId: p.id, userId: p.users.MEMBER.id, role: 'ADMIN' }),
      ),
    ).toBeNull();
  });

  it('an OWNER can make another user OWNER', async () => {
    const p = await createProject('Owners2');
    const owner = client(p.users.OWNER.cookie);
    const m = await owner.tracker.members.changeRole.mutate({
      projectId: p.id,
      userId: p.users.ADMIN.id,
      role: 'OWNER',
    });
    expect(m.role).toBe('OWNER');
  });
});

describe('instance administrators', () => {
  it('may read a project they are not a member of, but not change it', async () => {
    const root = await createUser('Root', { isAdmin: true });
    const c = client(root.cookie);
    const fx = await fixtures(project);
    expect(await errorCode(c.tracker.issues.get.query({ projectId: project.id, number: fx.issueNumber }))).toBeNull();
    expect(await errorCode(c.tracker.issues.close.mutate({ projectId: project.id, number: fx.issueNumber }))).toBe(
      'FORBIDDEN',
    );
    expect(await errorCode(c.tracker.apiKeys.list.query({ projectId: project.id }))).toBe('FORBIDDEN');
  });
});

describe('assistant conversations are their owner’s', () => {
  it('another member of the same project gets NOT_FOUND; reviewers may read it but not change it', async () => {
    const prisma = await getPrisma();
    const mine = await fixtures(project, 'MEMBER');
    const ref = { projectId: project.id, conversationId: mine.conversationId };
    for (const role of ['OWNER', 'ADMIN', 'VIEWER'] as const) {
      const c = client(project.users[role].cookie);
      expect(await errorCode(c.agent.conversations.get.query(ref)), role).toBe('NOT_FOUND');
      expect(await errorCode(c.agent.conversations.rename.mutate({ ...ref, title: 'Mine now' })), role).toBe(
        'NOT_FOUND',
      );
      expect(await errorCode(c.agent.conversations.delete.mutate(ref)), role).toBe('NOT_FOUND');
      expect(
        await errorCode(c.agent.feedback.submit.mutate({ ...ref, messageId: mine.messageId, value: -1 })),
        role,
      ).toBe('NOT_FOUND');
      const listed = await c.agent.conversations.list.query({ projectId: project.id });
      expect(
        listed.items.some((i) => i.id === mine.conversationId),
        role,
      ).toBe(false);
    }
    // Review (ADMIN and OWNER) shows it, read-only.
    const review = await client(project.users.ADMIN.cookie).agent.review.get.query(ref);
    expect(review.conversation.id).toBe(mine.conversationId);
    const row = await prisma.agentConversation.findUniqueOrThrow({ where: { id: mine.conversationId } });
    expect(row).toMatchObject({ title: 'Access check', deletedAt: null });
    expect(await prisma.agentFeedback.count({ where: { conversationId: mine.conversationId } })).toBe(0);
  });

  it('a conversation id of another project is NOT_FOUND for review too', async () => {
    const theirs = await fixtures(project, 'OWNER');
    const c = client(other.users.OWNER.cookie);
    const ref = { projectId: other.id, conversationId: theirs.conversationId };
    expect(await errorCode(c.agent.review.get.query(ref))).toBe('NOT_FOUND');
    expect(await errorCode(c.agent.review.export.query(ref))).toBe('NOT_FOUND');
    expect(await errorCode(c.agent.conversations.get.query(ref))).toBe('NOT_FOUND');
  });
});
