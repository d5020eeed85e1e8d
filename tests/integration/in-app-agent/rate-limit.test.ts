import { afterAll, beforeAll, expect, it } from 'vitest';
import { resetEnvCache } from '@/server/env';
import { postAgent, userMessageBody } from '../../helpers/agent';
import { createProject, type TestProject } from '../../helpers/fixtures';
import { startTestServer, type TestServer } from '../../helpers/http';

let server: TestServer;
let project: TestProject;
beforeAll(async () => {
  process.env.AGENT_RATE_LIMIT_PER_MINUTE = '2';
  resetEnvCache();
  server = await startTestServer();
  project = await createProject('Limits');
});
afterAll(() => server?.close());

it('limits each user with a clear 429 and Retry-After', async () => {
  const cookie = project.users.MEMBER.cookie;
  expect((await postAgent(server.url, project.id, cookie, userMessageBody('one'))).status).toBe(200);
  expect((await postAgent(server.url, project.id, cookie, userMessageBody('two'))).status).toBe(200);
  const third = await postAgent(server.url, project.id, cookie, userMessageBody('three'));
  expect(third.status).toBe(429);
  expect(third.error?.code).toBe('RATE_LIMITED');
  expect(Number(third.headers.get('retry-after'))).toBeGreaterThan(0);
  // Another user is not affected.
  expect((await postAgent(server.url, project.id, project.users.ADMIN.cookie, userMessageBody('hi'))).status).toBe(200);
});
