// Keys and roles through the official MCP client: a PROJECT key sees and runs every tool; an
// IN_APP_AGENT key sees only what its user's CURRENT role grants, runs reads on its own, and runs
// each granted write exactly when it carries a valid override.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fingerprintArgs, mintOverride, OVERRIDE_META_KEY } from '@/features/mcp/override';
import { MCP_TOOL_METADATA, TOOL_NAMES, type McpToolName } from '@/features/mcp/registry';
import { getPrisma } from '@/server/db';
import { hasProjectAccess, ROLES, type Role } from '@/server/rbac';
import { createIssue, createProject, type TestProject } from '../../helpers/fixtures';
import { startTestServer, type TestServer } from '../../helpers/http';
import { agentKey, connect, projectKey, rpcError, startReceiver, type Connected, type Receiver } from './mcp-client';

let server: TestServer;
let receiver: Receiver;
let project: TestProject;

const READS: McpToolName[] = [
  'list_issues',
  'get_issue',
  'search_issues',
  'list_members',
  'list_labels',
  'get_project_summary',
];
const WRITES: McpToolName[] = [
  'create_issue',
  'update_issue',
  'add_comment',
  'assign_issue',
  'close_issue',
  'delete_issue',
  'notify_webhook',
];
const EXPECTED_TOOLS: Record<Role, McpToolName[]> = {
  VIEWER: READS,
  MEMBER: [...READS, 'create_issue', 'update_issue', 'add_comment', 'assign_issue', 'close_issue', 'notify_webhook'],
  ADMIN: [...TOOL_NAMES],
  OWNER: [...TOOL_NAMES],
};

beforeAll(async () => {
  server = await startTestServer();
  receiver = await startReceiver();
  project = await createProject('Roles');
  await (await getPrisma()).project.update({ where: { id: project.id }, data: { webhookUrl: receiver.url } });
  await createIssue(project.id, { title: 'Seed issue', body: 'for reads' });
});
afterAll(async () => {
  await receiver?.close();
  await server?.close();
});

/** Arguments for one call of each tool; writes work on an issue created for the call. */
async function argsFor(tool: McpToolName, role: Role, who: string = role): Promise<Record<string, unknown>> {
  const needsIssue = ['update_issue', 'add_comment', 'assign_issue', 'close_issue', 'delete_issue'].includes(tool);
  const number = needsIssue ? (await createIssue(project.id, { title: `${tool} target (${who})` })).number : 1;
  switch (tool) {
    case 'get_issue':
    case 'close_issue':
    case 'delete_issue':
      return { number };
    case 'search_issues':
      return { query: 'seed' };
    case 'create_issue':
      return { title: `Created by ${who}` };
    case 'update_issue':
      return { number, priority: 'LOW' };
    case 'add_comment':
      return { number, body: `Comment by ${who}` };
    case 'assign_issue':
      return { number, assignee: project.users[role].id };
    case 'notify_webhook':
      return { message: `Hello from ${who}` };
    default:
      return {};
  }
}

it('the expected tool sets follow the RBAC matrix', () => {
  for (const role of ROLES) {
    expect(EXPECTED_TOOLS[role]).toEqual(
      MCP_TOOL_METADATA.filter((t) => hasProjectAccess({ role }, t.scope)).map((t) => t.name),
    );
  }
});

describe('PROJECT key', () => {
  it('lists and calls every tool', async () => {
    const c = await connect(server.url, (await projectKey(project)).secret);
    expect(await c.names()).toEqual([...TOOL_NAMES].sort());
    for (const tool of TOOL_NAMES) {
      const res = await c.call(tool, await argsFor(tool, 'OWNER', 'project key'));
      expect(res.isError, `${tool}: ${JSON.stringify(res.structuredContent)}`).toBeFalsy();
    }
    await c.close();
  });
});

describe.each(ROLES)('IN_APP_AGENT key of a %s', (role) => {
  let c: Connected;
  let keyId: string;
  beforeAll(async () => {
    const k = await agentKey(project, project.users[role].id);
    keyId = k.key.id;
    c = await connect(server.url, k.secret);
  });
  afterAll(async () => c?.close());

  it('lists exactly the tools the role grants, with annotations', async () => {
    const { tools } = await c.client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual([...EXPECTED_TOOLS[role]].sort());
    for (const t of tools) {
      const meta = MCP_TOOL_METADATA.find((m) => m.name === t.name)!;
      expect(t.annotations).toMatchObject(meta.annotations);
      expect(t.inputSchema.type).toBe('object');
    }
  });

  it('calls every read tool without approval', async () => {
    for (const tool of READS) {
      const res = await c.call(tool, await argsFor(tool, role));
      expect(res.isError, tool).toBeFalsy();
    }
  });

  it('cannot run any write tool without an override, and tools outside the role not at all', async () => {
    receiver.received.length = 0;
    const prisma = await getPrisma();
    const before = await prisma.issue.count({ where: { projectId: project.id } });
    const closedBefore = await prisma.issue.count({ where: { projectId: project.id, status: 'CLOSED' } });
    const commentsBefore = await prisma.comment.count();
    for (const tool of WRITES) {
      const args = await argsFor(tool, role);
      const err = await rpcError(c.call(tool, args));
      expect(err.data?.code, tool).toBe(EXPECTED_TOOLS[role].includes(tool) ? 'OVERRIDE_REQUIRED' : 'MISSING_SCOPE');
      if (!EXPECTED_TOOLS[role].includes(tool)) {
        // Even a correctly signed override cannot widen the role.
        const token = mintOverride({ tool, argsFingerprint: fingerprintArgs(args), keyId });
        expect((await rpcError(c.call(tool, args, { [OVERRIDE_META_KEY]: token }))).data?.code, tool).toBe(
          'MISSING_SCOPE',
        );
      }
    }
    // Only the target issues created by argsFor exist; nothing was changed by the refused calls.
    const created = WRITES.filter((t) =>
      ['update_issue', 'add_comment', 'assign_issue', 'close_issue', 'delete_issue'].includes(t),
    ).length;
    expect(await prisma.issue.count({ where: { projectId: project.id } })).toBe(before + created);
    expect(await prisma.issue.count({ where: { projectId: project.id, status: 'CLOSED' } })).toBe(closedBefore);
    expect(await prisma.comment.count()).toBe(commentsBefore);
    expect(receiver.received).toHaveLength(0);
  });

  it('runs each granted write tool with a valid override, attributed to the user', async () => {
    receiver.received.length = 0;
    for (const tool of WRITES.filter((t) => EXPECTED_TOOLS[role].includes(t))) {
      const args = await argsFor(tool, role);
      const token = mintOverride({ tool, argsFingerprint: fingerprintArgs(args), keyId });
      const res = await c.call(tool, args, { [OVERRIDE_META_KEY]: token });
      expect(res.isError, `${tool}: ${JSON.stringify(res.structuredContent)}`).toBeFalsy();
      if (tool === 'add_comment') {
        expect(res.structuredContent).toMatchObject({
          comment: { untrusted: false, author: project.users[role].name },
        });
      }
    }
    const prisma = await getPrisma();
    if (role !== 'VIEWER') {
      const created = await prisma.issue.findFirstOrThrow({
        where: { projectId: project.id, title: `Created by ${role}` },
      });
      expect(created.reporterId).toBe(project.users[role].id);
      expect(receiver.received.map((r) => JSON.parse(r.body).message)).toEqual([`Hello from ${role}`]);
    } else {
      expect(receiver.received).toHaveLength(0);
    }
  });
});

describe('the bound user role is read on every request', () => {
  it('a demoted member loses write tools at once; a removed member loses everything', async () => {
    const prisma = await getPrisma();
    const k = await agentKey(project, project.users.MEMBER.id);
    const c = await connect(server.url, k.secret);
    expect(await c.names()).toContain('create_issue');

    await prisma.projectMembership.update({
      where: { projectId_userId: { projectId: project.id, userId: project.users.MEMBER.id } },
      data: { role: 'VIEWER' },
    });
    expect(await c.names()).toEqual([...READS].sort());
    const args = { title: 'After demotion' };
    const token = mintOverride({ tool: 'create_issue', argsFingerprint: fingerprintArgs(args), keyId: k.key.id });
    expect((await rpcError(c.call('create_issue', args, { [OVERRIDE_META_KEY]: token }))).data?.code).toBe(
      'MISSING_SCOPE',
    );

    await prisma.projectMembership.delete({
      where: { projectId_userId: { projectId: project.id, userId: project.users.MEMBER.id } },
    });
    expect(await c.names()).toEqual([]);
    expect((await rpcError(c.call('list_issues', {}))).data?.code).toBe('MISSING_SCOPE');
    await c.close();
  });
});
