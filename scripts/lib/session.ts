/**
 * A signed-in browser, as scripts see it: signs in through next-auth's credentials flow over HTTP
 * (the CSRF token, then the credentials callback) and keeps the session cookie. Used by the soak
 * and load scripts against a running app.
 */
export interface Session {
  cookie: string;
  email: string;
}

function cookiesOf(res: Response): string[] {
  return res.headers.getSetCookie().map((c) => c.split(';')[0]!);
}

export async function signIn(baseUrl: string, email: string, password: string): Promise<Session> {
  const csrf = await fetch(`${baseUrl}/api/auth/csrf`);
  const { csrfToken } = (await csrf.json()) as { csrfToken: string };
  const jar = cookiesOf(csrf);
  const res = await fetch(`${baseUrl}/api/auth/callback/credentials`, {
    method: 'POST',
    redirect: 'manual',
    headers: { 'content-type': 'application/x-www-form-urlencoded', cookie: jar.join('; '), origin: baseUrl },
    body: new URLSearchParams({ csrfToken, email, password, json: 'true', callbackUrl: baseUrl }).toString(),
  });
  const session = cookiesOf(res).find((c) => /session-token=/.test(c));
  if (!session) throw new Error(`sign-in of ${email} failed (HTTP ${res.status})`);
  return { cookie: session, email };
}

/** Waits until `url` answers (any HTTP status), or fails after `timeoutMs`. */
export async function waitForHttp(url: string, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      await fetch(url);
      return;
    } catch {
      if (Date.now() > deadline) throw new Error(`${url} did not answer within ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 250));
    }
  }
}

/** A free TCP port on 127.0.0.1. */
export async function freePort(): Promise<number> {
  const net = await import('node:net');
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
  });
}
