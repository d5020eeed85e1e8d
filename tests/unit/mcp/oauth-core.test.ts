// The pure parts of the MCP authorization server: which redirect URIs a client may register and
// how a requested one is matched, PKCE S256, scopes within a role, the sealed pending request, the
// consent form's choices, client names, and the checks of a client metadata document and its URL.
import { afterEach, describe, expect, it } from 'vitest';
import { chosenScopes } from '@/features/mcp/oauth/authorize';
import { clientDisplayName } from '@/features/mcp/oauth/client-name';
import { checkClientIdUrl, validateMetadataDocument } from '@/features/mcp/oauth/metadata-document';
import { openPending, PENDING_TTL_MS, sealPending } from '@/features/mcp/oauth/pending';
import { isCodeVerifier, s256, verifierMatches } from '@/features/mcp/oauth/pkce';
import { checkRedirectUri, redirectHost, redirectUriMatches } from '@/features/mcp/oauth/redirect-uri';
import { formatScopes, parseScopeParam, roleKeyScopes, withinRole } from '@/features/mcp/oauth/scopes';
import { KEY_SCOPES, READ_ONLY_KEY_SCOPES } from '@/features/mcp/key-scopes';
import { resetEnvCache } from '@/server/env';

afterEach(() => {
  delete process.env.MCP_OAUTH_TEST_LOOPBACK_CLIENT_IDS;
  resetEnvCache();
});

describe('redirect URIs', () => {
  it('accepts https, loopback http and app schemes, and refuses the rest with a reason', () => {
    const ok = {
      'https://claude.ai/api/mcp/auth_callback': 'https',
      'http://localhost:33418/callback': 'loopback',
      'http://127.0.0.1/callback': 'loopback',
      'http://[::1]:8080/cb': 'loopback',
      'cursor://anysphere.cursor-retrieval/oauth/user-tracker/callback': 'private-use',
      'vscode://vscode.github-authentication/did-authenticate': 'private-use',
      'com.example.app:/oauth2redirect': 'private-use',
    } as const;
    for (const [uri, kind] of Object.entries(ok))
      expect([uri, checkRedirectUri(uri)]).toEqual([uri, { ok: true, kind }]);
    const refused = [
      'http://example.com/callback',
      'http://192.168.1.10/callback',
      'https://example.com/cb#frag',
      'https://user:pw@example.com/cb',
      'javascript:alert(1)',
      'data:text/html,hi',
      'file:///etc/passwd',
      'JAVASCRIPT:alert(1)',
      '/relative/path',
      'https://example.com/a b',
      'https://example.com/\u0000',
      `https://example.com/${'a'.repeat(2100)}`,
      '',
    ];
    for (const uri of refused) expect([uri, checkRedirectUri(uri).ok]).toEqual([uri, false]);
  });

  it('matches exactly, except any port on a loopback http URI; localhost and 127.0.0.1 stay apart', () => {
    const registered = [
      'http://127.0.0.1/callback',
      'http://localhost:3000/cb',
      'https://app.example/cb',
      'cursor://x/cb',
    ];
    expect(redirectUriMatches(registered, 'https://app.example/cb')).toBe(true);
    expect(redirectUriMatches(registered, 'cursor://x/cb')).toBe(true);
    expect(redirectUriMatches(registered, 'http://127.0.0.1:54321/callback')).toBe(true);
    expect(redirectUriMatches(registered, 'http://localhost:9999/cb')).toBe(true);
    // Not interchangeable, and nothing else is loosened.
    expect(redirectUriMatches(registered, 'http://localhost:54321/callback')).toBe(false);
    expect(redirectUriMatches(registered, 'http://127.0.0.1:3000/cb')).toBe(false);
    expect(redirectUriMatches(registered, 'http://127.0.0.1:54321/callback/more')).toBe(false);
    expect(redirectUriMatches(registered, 'http://127.0.0.1:54321/callback?x=1')).toBe(false);
    expect(redirectUriMatches(registered, 'https://app.example/cb/')).toBe(false);
    expect(redirectUriMatches(registered, 'https://app.example:8443/cb')).toBe(false);
    expect(redirectUriMatches(registered, 'https://APP.example/cb')).toBe(false);
    expect(redirectUriMatches(registered, 'cursor://x/cb2')).toBe(false);
    expect(redirectUriMatches(['https://127.0.0.1/cb'], 'http://127.0.0.1:80/cb')).toBe(false);
  });

  it('names the host a redirect goes to', () => {
    expect(redirectHost('http://127.0.0.1:5555/cb')).toBe('127.0.0.1:5555');
    expect(redirectHost('https://claude.ai/api/mcp/auth_callback')).toBe('claude.ai');
    expect(redirectHost('cursor://anysphere.cursor-retrieval/oauth')).toBe('cursor://anysphere.cursor-retrieval');
  });
});

describe('PKCE S256', () => {
  it('matches the RFC 7636 appendix B example and nothing else', () => {
    const verifier = 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk';
    const challenge = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM';
    expect(s256(verifier)).toBe(challenge);
    expect(verifierMatches(verifier, challenge)).toBe(true);
    expect(verifierMatches(`${verifier}x`, challenge)).toBe(false);
    expect(verifierMatches(verifier, s256('another-verifier-of-enough-length-0123456789ab'))).toBe(false);
    // "plain" would send the verifier as the challenge: it never matches.
    expect(verifierMatches(verifier, verifier)).toBe(false);
  });

  it('accepts verifiers of 43 to 128 unreserved characters only', () => {
    expect(isCodeVerifier('a'.repeat(43))).toBe(true);
    expect(isCodeVerifier('a'.repeat(128))).toBe(true);
    expect(isCodeVerifier('a'.repeat(42))).toBe(false);
    expect(isCodeVerifier('a'.repeat(129))).toBe(false);
    expect(isCodeVerifier(`${'a'.repeat(42)}+`)).toBe(false);
  });
});

describe('scopes', () => {
  it('reads the known scopes of a scope parameter and sets the others aside', () => {
    expect(parseScopeParam('issues:write issues:read  openid issues:read')).toEqual({
      known: ['issues:read', 'issues:write'],
      unknown: ['openid'],
    });
    expect(parseScopeParam(undefined)).toEqual({ known: [], unknown: [] });
    expect(formatScopes(['members:read', 'issues:read'])).toBe('issues:read members:read');
  });

  it('never goes beyond the role', () => {
    expect(roleKeyScopes('OWNER')).toEqual(KEY_SCOPES);
    expect(roleKeyScopes('VIEWER')).toEqual(READ_ONLY_KEY_SCOPES);
    expect(roleKeyScopes(null)).toEqual([]);
    expect(roleKeyScopes('MEMBER')).not.toContain('issues:delete');
    expect(withinRole(KEY_SCOPES, 'VIEWER')).toEqual(READ_ONLY_KEY_SCOPES);
    expect(withinRole(['issues:delete', 'issues:read'], 'MEMBER')).toEqual(['issues:read']);
    expect(withinRole(KEY_SCOPES, null)).toEqual([]);
  });

  it('turns the consent form into scopes: presets within the role, single scopes only if the role holds them', () => {
    expect(chosenScopes('read-only', [], 'MEMBER')).toEqual({ ok: true, scopes: READ_ONLY_KEY_SCOPES });
    expect(chosenScopes('full', [], 'MEMBER')).toEqual({ ok: true, scopes: roleKeyScopes('MEMBER') });
    expect(chosenScopes('full', [], 'OWNER')).toEqual({ ok: true, scopes: KEY_SCOPES });
    expect(chosenScopes('custom', ['issues:write', 'issues:read'], 'MEMBER')).toEqual({
      ok: true,
      scopes: ['issues:read', 'issues:write'],
    });
    const beyond = chosenScopes('custom', ['issues:read', 'issues:delete'], 'MEMBER');
    expect(beyond).toEqual({ ok: false, message: 'Your role in this project cannot grant issues:delete.' });
    expect(chosenScopes('custom', ['issues:write'], 'VIEWER').ok).toBe(false);
    expect(chosenScopes('custom', ['admin:everything'], 'OWNER').ok).toBe(false);
    expect(chosenScopes('custom', [], 'OWNER').ok).toBe(false);
    expect(chosenScopes('everything', [], 'OWNER').ok).toBe(false);
    expect(chosenScopes(null, [], 'OWNER').ok).toBe(false);
  });
});

describe('the sealed pending request', () => {
  const request = {
    clientId: 'https://client.example/oauth/metadata.json',
    redirectUri: 'http://127.0.0.1:4000/callback',
    codeChallenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM',
    scopes: ['issues:read' as const],
    state: 'xyz',
  };

  it('opens what it sealed until it expires', () => {
    const now = 1_800_000_000_000;
    const sealed = sealPending(request, now);
    expect(openPending(sealed, now + 1000)).toEqual({ ok: true, pending: { ...request, exp: now + PENDING_TTL_MS } });
    expect(openPending(sealed, now + PENDING_TTL_MS)).toEqual({ ok: false, reason: 'expired' });
  });

  it('refuses any change to it, and anything else', () => {
    const sealed = sealPending(request);
    const [payload, mac] = sealed.split('.') as [string, string];
    const changed = Buffer.from(
      Buffer.from(payload, 'base64url').toString('utf8').replace('127.0.0.1:4000', 'evil.example'),
    ).toString('base64url');
    expect(openPending(`${changed}.${mac}`)).toEqual({ ok: false, reason: 'invalid' });
    expect(openPending(`${payload}.${mac.slice(1)}A`)).toEqual({ ok: false, reason: 'invalid' });
    for (const v of ['', '.', 'abc', null, 42, `${payload}.`, 'x'.repeat(7000)])
      expect(openPending(v)).toEqual({ ok: false, reason: 'invalid' });
  });
});

describe('client names', () => {
  it('cleans what a client calls itself, and falls back to a host', () => {
    expect(clientDisplayName('  Claude \u0000\u202e Desktop\n', 'https://claude.ai/x')).toBe('Claude Desktop');
    expect(clientDisplayName('', 'https://claude.ai/oauth/client.json')).toBe('claude.ai');
    expect(clientDisplayName(undefined, 'cursor://anysphere/cb')).toBe('anysphere');
    expect(clientDisplayName(undefined, 'not a url')).toBe('Unnamed app');
    expect(clientDisplayName('x'.repeat(300), 'https://a.example/')).toHaveLength(100);
  });
});

describe('client metadata documents', () => {
  const url = 'https://client.example/oauth/client.json';
  const doc = { client_id: url, client_name: 'Example', redirect_uris: ['http://127.0.0.1/callback'] };

  it('accepts a document naming its own URL, with safe redirect URIs and no secret', () => {
    expect(validateMetadataDocument(url, doc)).toEqual({
      ok: true,
      name: 'Example',
      clientUri: null,
      redirectUris: ['http://127.0.0.1/callback'],
    });
    expect(
      validateMetadataDocument(url, { ...doc, token_endpoint_auth_method: 'none', logo_uri: 'https://x/l.png' }).ok,
    ).toBe(true);
  });

  it.each([
    ['another client_id', { ...doc, client_id: 'https://client.example/other.json' }, 'names another client_id'],
    ['a secret', { ...doc, client_secret: 'shh' }, 'must not carry a client secret'],
    [
      'a secret-based auth method',
      { ...doc, token_endpoint_auth_method: 'client_secret_basic' },
      'Only token_endpoint_auth_method "none"',
    ],
    [
      'an unsafe redirect',
      { ...doc, redirect_uris: ['javascript:alert(1)'] },
      'redirect URI of the document uses the javascript: scheme',
    ],
    ['no redirect', { ...doc, redirect_uris: [] }, 'invalid'],
    ['another grant type', { ...doc, grant_types: ['client_credentials'] }, 'grant types'],
    ['no object', ['not', 'an', 'object'], 'invalid'],
  ])('refuses %s', (_label, raw, message) => {
    const r = validateMetadataDocument(url, raw);
    expect(r.ok).toBe(false);
    expect(r.ok ? '' : r.description).toContain(message);
  });

  it('takes only https URLs with a path on hosts it may fetch from', () => {
    expect(checkClientIdUrl(url).ok).toBe(true);
    const refusals: Array<[string, string]> = [
      ['http://client.example/c.json', 'CLIENT_ID_URL_INVALID'],
      ['https://client.example/', 'CLIENT_ID_URL_INVALID'],
      ['https://client.example/a/../c.json', 'CLIENT_ID_URL_INVALID'],
      ['https://client.example/c.json#x', 'CLIENT_ID_URL_INVALID'],
      ['https://u:p@client.example/c.json', 'CLIENT_ID_URL_INVALID'],
      ['https://CLIENT.example/c.json', 'CLIENT_ID_URL_INVALID'],
      ['https://169.254.169.254/latest/meta-data', 'CLIENT_ID_URL_REFUSED'],
      ['https://10.0.0.7/client.json', 'CLIENT_ID_URL_REFUSED'],
      ['https://127.0.0.1/client.json', 'CLIENT_ID_URL_REFUSED'],
      ['https://[::1]/client.json', 'CLIENT_ID_URL_REFUSED'],
      ['https://metadata.google.internal/c.json', 'CLIENT_ID_URL_REFUSED'],
      ['http://127.0.0.1:4000/client.json', 'CLIENT_ID_URL_INVALID'],
    ];
    for (const [id, code] of refusals) {
      const r = checkClientIdUrl(id);
      expect([id, r.ok ? 'ok' : r.code]).toEqual([id, code]);
    }
  });

  it('lets plain http on loopback through only with the test-only setting, and nothing else private', () => {
    process.env.MCP_OAUTH_TEST_LOOPBACK_CLIENT_IDS = '1';
    resetEnvCache();
    expect(checkClientIdUrl('http://127.0.0.1:4000/client.json').ok).toBe(true);
    expect(checkClientIdUrl('http://localhost:4000/client.json').ok).toBe(true);
    expect(checkClientIdUrl('http://10.0.0.7/client.json').ok).toBe(false);
    expect(checkClientIdUrl('https://192.168.0.2/client.json').ok).toBe(false);
    expect(checkClientIdUrl('http://client.example/client.json').ok).toBe(false);
  });
});
