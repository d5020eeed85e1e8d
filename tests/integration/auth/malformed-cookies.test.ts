// A cookie the server cannot decode (malformed percent-encoding, a broken chunk) is no session:
// tRPC and the assistant's route answer "sign in" (401), never 500, and a valid session cookie
// next to a broken unrelated cookie still works. Real HTTP to the real route handlers.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseCookieHeader, readCookie } from '@/server/cookies';
import { agentUrl, userMessageBody } from '../../helpers/agent';
import { createProject, type TestProject } from '../../helpers/fixtures';
import { startTestServer, type TestServer } from '../../helpers/http';

let server: TestServer;
let project: TestProject;

beforeAll(async () => {
  server = await startTestServer();
  project = await createProject('Cookies');
});
afterAll(async () => {
  await server?.close();
});

const BROKEN = [
  'next-auth.session-token=%E0%A4%A',
  'next-auth.session-token=%',
  'next-auth.session-token.0=%ZZ',
  '__Secure-next-auth.session-token=%C0%80%',
];

async function trpcGet(cookie: string) {
  const res = await fetch(`${server.url}/api/trpc/tracker.projects.list`, { headers: { cookie } });
  return {
    status: res.status,
    body: (await res.json()) as { error?: { json?: { data?: { code?: string; appCode?: string } } } },
  };
}

describe('malformed session cookies', () => {
  it('tRPC answers UNAUTHORIZED (401), not 500, for every broken cookie', async () => {
    for (const cookie of BROKEN) {
      const res = await trpcGet(cookie);
      expect([cookie, res.status]).toEqual([cookie, 401]);
      expect(res.body.error?.json?.data).toMatchObject({ code: 'UNAUTHORIZED', appCode: 'UNAUTHENTICATED' });
    }
  });

  it('the assistant route answers 401 UNAUTHENTICATED, not 500', async () => {
    for (const cookie of BROKEN) {
      const res = await fetch(agentUrl(server.url, project.id), {
        method: 'POST',
        headers: { 'content-type': 'application/json', origin: server.url, cookie },
        body: JSON.stringify(userMessageBody('hello')),
      });
      expect([cookie, res.status]).toEqual([cookie, 401]);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('UNAUTHENTICATED');
    }
  });

  it('a valid session still works next to an undecodable cookie of another name', async () => {
    const cookie = `tracking=%E0%A4%A; ${project.users.MEMBER.cookie}; other=%`;
    const res = await trpcGet(cookie);
    expect(res.status).toBe(200);
  });
});

describe('parseCookieHeader', () => {
  it('skips undecodable values, keeps the first of a repeated name, and joins complete chunks only', () => {
    const c = parseCookieHeader('a=1; b=%E0%A4%A; a=2; c="quoted%20value"; =x; d; t.0=he; t.1=llo; u.0=x; u.2=y');
    expect([...c.keys()]).toEqual(['a', 'c', 't.0', 't.1', 'u.0', 'u.2']);
    expect(c.get('a')).toBe('1');
    expect(c.get('c')).toBe('quoted value');
    expect(readCookie(c, 't')).toBe('hello');
    expect(readCookie(c, 'u')).toBeUndefined();
    expect(readCookie(c, 'b')).toBeUndefined();
  });
});
