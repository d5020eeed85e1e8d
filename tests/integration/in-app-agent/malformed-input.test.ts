// Ids in an assistant request that cannot be ids (a NUL byte, overlong) name nothing, and text the
// database cannot store (NUL, half a surrogate pair) is refused: the route answers 404 / 400 with
// the usual codes and never sends them to the database (PostgreSQL refuses them with an error,
// which used to surface as a 500). Found by `npm run fuzz`.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getPrisma } from '@/server/db';
import { agentUrl, postAgent, userMessageBody } from '../../helpers/agent';
import { createProject, type TestProject } from '../../helpers/fixtures';
import { startTestServer, type TestServer } from '../../helpers/http';

let server: TestServer;
let project: TestProject;

beforeAll(async () => {
  server = await startTestServer();
  project = await createProject('Malformed ids');
});
afterAll(async () => {
  await server?.close();
});

describe('malformed ids and text in assistant requests', () => {
  it('a project id with a NUL byte or of 300 characters is PROJECT_NOT_FOUND', async () => {
    for (const projectId of ['a\u0000b', `${project.id}\u0000`, 'p'.repeat(300)]) {
      const res = await fetch(agentUrl(server.url, projectId), {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin: server.url, cookie: project.users.MEMBER.cookie },
        body: JSON.stringify(userMessageBody('hello')),
      });
      expect([JSON.stringify(projectId).slice(0, 20), res.status]).toEqual([
        JSON.stringify(projectId).slice(0, 20),
        404,
      ]);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('PROJECT_NOT_FOUND');
    }
  });

  it('a conversation id with a NUL byte is malformed; an interrupt id with one is not found', async () => {
    const cookie = project.users.MEMBER.cookie;
    const thread = await postAgent(server.url, project.id, cookie, userMessageBody('hello', 'c_\u0000abcdefgh'));
    expect([thread.status, thread.error?.code]).toEqual([400, 'INVALID_REQUEST']);
    const resume = await postAgent(server.url, project.id, cookie, {
      threadId: 'c_xxxxxxxx',
      messages: [],
      resume: [{ interruptId: 'apr_\u0000', status: 'resolved', payload: { approved: true } }],
    });
    expect([resume.status, resume.error?.code]).toEqual([404, 'INTERRUPT_UNKNOWN']);
  });

  it('a message or an approval note with NUL or broken Unicode is INVALID_REQUEST', async () => {
    const cookie = project.users.MEMBER.cookie;
    const bodies = [
      userMessageBody('a\u0000b'),
      userMessageBody('half a pair: \ud800'),
      { ...userMessageBody(''), messages: [{ id: 'm', role: 'user', content: [{ type: 'text', text: '\u0000' }] }] },
      {
        threadId: 'c_x',
        messages: [],
        resume: [{ interruptId: 'apr_x', status: 'resolved', payload: { approved: false, feedback: 'no\u0000' } }],
      },
    ];
    for (const body of bodies) {
      const res = await postAgent(server.url, project.id, cookie, body);
      expect([res.status, res.error?.code]).toEqual([400, 'INVALID_REQUEST']);
    }
    // Nothing was stored for them.
    expect(await (await getPrisma()).agentConversation.count({ where: { projectId: project.id } })).toBe(0);
  });
});
