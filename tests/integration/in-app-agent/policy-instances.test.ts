// Two app instances on one PostgreSQL database, as separate processes over real HTTP: a change of
// the project's tool permissions, instructions or a conversation's "always allow" saved through one
// instance holds for the very next run opened on the other (each run reads them in the statement
// that opens it: no process keeps a copy). PostgreSQL only (the embedded database belongs to one
// process).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ToolApprovalInterrupt } from '@/features/in-app-agent/schema';
import { postAgent, userMessageBody, type AgentResponse } from '../../helpers/agent';
import { startFakeOpenAI, type FakeServer, type ScriptedTurn } from '../../helpers/fake-models';
import { createProject, type TestProject } from '../../helpers/fixtures';
import { startInstance, type AppInstance } from '../../helpers/instances';
import { trpcClient } from '../../helpers/trpc';

const onPostgres = Boolean(process.env.TEST_DATABASE_URL);
let model: FakeServer;
let a: AppInstance;
let b: AppInstance;
let project: TestProject;
let turns: ScriptedTurn[] = [];

beforeAll(async () => {
  if (!onPostgres) return;
  model = await startFakeOpenAI((_b, i) => turns[i] ?? { text: ['(no more turns)'] });
  const env = {
    AGENT_MODEL_PROVIDER: 'openai-compatible',
    OPENAI_COMPATIBLE_BASE_URL: model.url,
    OPENAI_COMPATIBLE_MODEL: 'scripted-model',
    AGENT_MODEL_MAX_RETRIES: '0',
    AGENT_RATE_LIMIT_PER_MINUTE: '1000',
    AGENT_MAX_CONCURRENT_RUNS_PER_USER: '1000',
    TRPC_MUTATIONS_PER_MINUTE: '1000',
    AGENT_MCP_URL: undefined,
    NEXTAUTH_URL: undefined,
  };
  [a, b] = await Promise.all([startInstance(env), startInstance(env)]);
  project = await createProject('Policy on two instances');
}, 120_000);

afterAll(async () => {
  await a?.kill('SIGKILL');
  await b?.kill('SIGKILL');
  await model?.close();
});

function script(...t: ScriptedTurn[]) {
  turns = t;
  model.requests.length = 0;
}

const interruptsOf = (res: AgentResponse): ToolApprovalInterrupt[] => {
  const fin = res.events.at(-1);
  return fin?.type === 'RUN_FINISHED' && fin.outcome?.type === 'interrupt'
    ? (fin.outcome.interrupts as ToolApprovalInterrupt[])
    : [];
};
const offered = () =>
  ((model.requests[0]?.tools ?? []) as Array<{ function: { name: string } }>).map((t) => t.function.name);

async function savePolicy(on: AppInstance, cells: Record<string, Record<string, string>>) {
  const api = trpcClient(on.url, project.users.ADMIN.cookie);
  const { policy } = await api.agent.settings.get.query({ projectId: project.id });
  return api.agent.settings.savePolicy.mutate({
    projectId: project.id,
    baseVersion: policy.version,
    policy: { cells, rules: {} } as never,
  });
}

describe.skipIf(!onPostgres)('project settings on two instances', () => {
  it('holds a permission change saved on one instance for the next run on the other, at once', async () => {
    const member = project.users.MEMBER;
    script({ toolCalls: [{ name: 'create_issue', args: { title: 'Before' } }] });
    // Each instance has served a run under the defaults (anything it could have kept is warm).
    expect(interruptsOf(await postAgent(b.url, project.id, member.cookie, userMessageBody('create')))).toHaveLength(1);
    script({ toolCalls: [{ name: 'create_issue', args: { title: 'Before' } }] });
    expect(interruptsOf(await postAgent(a.url, project.id, member.cookie, userMessageBody('create')))).toHaveLength(1);

    // Saved on A, then at once (no wait of any kind) the next run on B goes by it.
    await savePolicy(a, { create_issue: { MEMBER: 'auto' } });
    script({ toolCalls: [{ name: 'create_issue', args: { title: 'Unasked on B' } }] }, { text: ['Done.'] });
    const onB = await postAgent(b.url, project.id, member.cookie, userMessageBody('create'));
    expect(interruptsOf(onB)).toEqual([]);
    expect(onB.events.some((e) => e.type === 'TOOL_CALL_RESULT' && e.content.includes('Unasked on B'))).toBe(true);

    // Back the other way: "not available" saved on B holds on A.
    await savePolicy(b, { create_issue: { MEMBER: 'off' } });
    script({ text: ['ok'] });
    await postAgent(a.url, project.id, member.cookie, userMessageBody('hello'));
    expect(offered()).not.toContain('create_issue');
    expect(offered()).toContain('list_issues');
  });

  it('holds instructions and a revoked "always allow" across instances', async () => {
    const member = project.users.MEMBER;
    await savePolicy(a, {});
    await trpcClient(b.url, project.users.OWNER.cookie).agent.settings.saveInstructions.mutate({
      projectId: project.id,
      baseVersion: 0,
      text: 'Sign every answer with “— Tracker bot”.',
    });
    script({ toolCalls: [{ name: 'create_issue', args: { title: 'Allowed' } }] });
    const first = await postAgent(a.url, project.id, member.cookie, userMessageBody('create'));
    const system = ((model.requests[0]?.messages ?? []) as Array<{ role: string; content: string }>)[0]?.content ?? '';
    expect(system).toContain('Sign every answer with “— Tracker bot”.');
    const threadId = (first.events[0] as { threadId: string }).threadId;
    const [card] = interruptsOf(first);
    script({ text: ['Made.'] });
    await postAgent(b.url, project.id, member.cookie, {
      threadId,
      messages: [],
      resume: [{ interruptId: card!.id, status: 'resolved', payload: { approved: true, alwaysInConversation: true } }],
    });
    // Allowed on B: runs unasked on A.
    script({ toolCalls: [{ name: 'create_issue', args: { title: 'Allowed again' } }] }, { text: ['ok'] });
    expect(interruptsOf(await postAgent(a.url, project.id, member.cookie, userMessageBody('more', threadId)))).toEqual(
      [],
    );
    // Revoked through A: asks on B.
    await trpcClient(a.url, member.cookie).agent.allowances.revoke.mutate({
      projectId: project.id,
      conversationId: threadId,
      toolName: 'create_issue',
    });
    script({ toolCalls: [{ name: 'create_issue', args: { title: 'Asked again' } }] });
    expect(
      interruptsOf(await postAgent(b.url, project.id, member.cookie, userMessageBody('more', threadId))),
    ).toHaveLength(1);
  });
});
