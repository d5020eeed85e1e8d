// Environment validation (src/server/env.ts): every bad value is refused at start-up with a message
// that names the variable, production refuses to run without real secrets, development works with
// no configuration at all.
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { readFileSync } from 'node:fs';
import { ENV_VARIABLES, parseEnv } from '@/server/env';

function errorOf(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    return (err as Error).message;
  }
  throw new Error('expected the environment to be refused');
}

/** parseEnv as the server sees it when the process runs with NODE_ENV=production. */
async function productionParseEnv(): Promise<typeof parseEnv> {
  vi.stubEnv('NODE_ENV', 'production');
  vi.resetModules();
  return (await import('@/server/env')).parseEnv;
}

const SECRET_A = 'a'.repeat(32);
const SECRET_B = 'b'.repeat(40);

afterEach(() => {
  vi.unstubAllEnvs();
  vi.resetModules();
});

describe('development defaults', () => {
  it('starts with no configuration: embedded database, demo seeding, usable dev secrets, default limits', () => {
    const e = parseEnv({});
    expect(e.NODE_ENV).toBe('development');
    expect(e.DATABASE_URL).toBeUndefined();
    expect(e.PGLITE_DIR).toBe('.data/pglite');
    expect(e.AUTO_SEED).toBe(true);
    expect(e.NEXTAUTH_SECRET.length).toBeGreaterThanOrEqual(32);
    expect(e.MCP_OVERRIDE_SECRET.length).toBeGreaterThanOrEqual(32);
    expect(e.NEXTAUTH_URL).toBeUndefined();
    expect(e.AGENT_MODEL_PROVIDER).toBeUndefined();
    expect({
      steps: e.AGENT_MAX_STEPS,
      retries: e.AGENT_MODEL_MAX_RETRIES,
      context: e.AGENT_CONTEXT_TOKENS,
      stale: e.AGENT_RUN_STALE_SECONDS,
      approvalTtl: e.AGENT_APPROVAL_TTL_SECONDS,
      rate: e.AGENT_RATE_LIMIT_PER_MINUTE,
      running: e.AGENT_MAX_CONCURRENT_RUNS_PER_USER,
      mcpCalls: e.MCP_CALLS_PER_KEY_PER_MINUTE,
    }).toEqual({
      steps: 8,
      retries: 2,
      context: 24_000,
      stale: 60,
      approvalTtl: 600,
      rate: 20,
      running: 3,
      mcpCalls: 120,
    });
  });

  it('treats empty and blank values as unset', () => {
    const e = parseEnv({
      DATABASE_URL: '',
      NEXTAUTH_URL: '  ',
      AGENT_MAX_STEPS: '',
      NEXTAUTH_SECRET: ' ',
      PGLITE_DIR: '',
      AUTO_SEED: '',
    });
    expect(e.DATABASE_URL).toBeUndefined();
    expect(e.NEXTAUTH_URL).toBeUndefined();
    expect(e.AGENT_MAX_STEPS).toBe(8);
    expect(e.NEXTAUTH_SECRET.length).toBeGreaterThanOrEqual(32);
    expect(e.PGLITE_DIR).toBe('.data/pglite');
    expect(parseEnv({ PGLITE_DIR: '   ' }).PGLITE_DIR).toBe('.data/pglite');
    expect(parseEnv({ PGLITE_DIR: 'memory://' }).PGLITE_DIR).toBe('memory://');
    expect(e.AUTO_SEED).toBe(true);
  });

  it('enables an OAuth provider only as a pair: both variables or neither', () => {
    const both = parseEnv({
      GITHUB_ID: 'gh-id',
      GITHUB_SECRET: 'gh-secret',
      GOOGLE_CLIENT_ID: 'g-id',
      GOOGLE_CLIENT_SECRET: 'g-secret',
    });
    expect([both.GITHUB_ID, both.GITHUB_SECRET, both.GOOGLE_CLIENT_ID, both.GOOGLE_CLIENT_SECRET]).toEqual([
      'gh-id',
      'gh-secret',
      'g-id',
      'g-secret',
    ]);
    const half: Array<[Record<string, string>, string, string]> = [
      [{ GITHUB_ID: 'gh-id' }, 'GITHUB_SECRET', 'GITHUB_ID'],
      [{ GITHUB_ID: 'gh-id', GITHUB_SECRET: ' ' }, 'GITHUB_SECRET', 'GITHUB_ID'],
      [{ GITHUB_SECRET: 'gh-secret' }, 'GITHUB_ID', 'GITHUB_SECRET'],
      [{ GOOGLE_CLIENT_ID: 'g-id' }, 'GOOGLE_CLIENT_SECRET', 'GOOGLE_CLIENT_ID'],
      [{ GOOGLE_CLIENT_SECRET: 'g-secret' }, 'GOOGLE_CLIENT_ID', 'GOOGLE_CLIENT_SECRET'],
    ];
    for (const [source, missing, present] of half) {
      const message = errorOf(() => parseEnv(source));
      expect(message).toContain(`  ${missing}: is required when ${present} is set`);
      // The configured secret's value is never echoed.
      expect(message).not.toMatch(/gh-secret|g-secret/);
    }
    // Reported together with the schema's own findings.
    const message = errorOf(() => parseEnv({ GITHUB_ID: 'gh-id', AGENT_MAX_STEPS: '0' }));
    expect(message).toContain('  GITHUB_SECRET:');
    expect(message).toContain('  AGENT_MAX_STEPS:');
  });

  it('accepts valid settings', () => {
    const e = parseEnv({
      DATABASE_URL: 'postgresql://app:pw@db.internal:5432/tracker',
      NEXTAUTH_URL: 'https://tracker.example.com',
      NEXTAUTH_SECRET: SECRET_A,
      MCP_OVERRIDE_SECRET: SECRET_B,
      AUTO_SEED: '0',
      AGENT_MODEL_PROVIDER: 'openai-compatible',
      OPENAI_COMPATIBLE_BASE_URL: 'http://127.0.0.1:11434/v1',
      AGENT_MAX_STEPS: '50',
      AGENT_RUN_STALE_SECONDS: '5',
    });
    expect(e.DATABASE_URL).toBe('postgresql://app:pw@db.internal:5432/tracker');
    expect(e.NEXTAUTH_SECRET).toBe(SECRET_A);
    expect(e.MCP_OVERRIDE_SECRET).toBe(SECRET_B);
    expect(e.AUTO_SEED).toBe(false);
    expect(e.AGENT_MODEL_PROVIDER).toBe('openai-compatible');
    expect(e.AGENT_MAX_STEPS).toBe(50);
    expect(e.AGENT_RUN_STALE_SECONDS).toBe(5);
    expect(parseEnv({ DATABASE_URL: 'postgres://localhost/x' }).DATABASE_URL).toBe('postgres://localhost/x');
    expect(parseEnv({ AUTO_SEED: 'false' }).AUTO_SEED).toBe(false);
    expect(parseEnv({ AUTO_SEED: '1' }).AUTO_SEED).toBe(true);
  });
});

describe('invalid values are refused with a message naming the variable', () => {
  const cases: Array<[string, string, RegExp]> = [
    ['DATABASE_URL', 'mysql://localhost/db', /postgres/],
    ['DATABASE_URL', 'localhost:5432', /postgres/],
    ['NODE_ENV', 'staging', /./],
    ['NEXTAUTH_URL', 'not a url', /./],
    ['NEXTAUTH_SECRET', 'too-short', /at least 32 characters/],
    ['MCP_OVERRIDE_SECRET', 'x'.repeat(31), /at least 32 characters/],
    ['AUTO_SEED', 'maybe', /./],
    ['AGENT_MODEL_PROVIDER', 'gpt-9', /./],
    ['AGENT_MAX_STEPS', '0', /between 1 and 50/],
    ['AGENT_MAX_STEPS', '51', /between 1 and 50/],
    ['AGENT_MAX_STEPS', 'ten', /integer/],
    ['AGENT_CONTEXT_TOKENS', '2.5', /integer/],
    ['AGENT_RUN_STALE_SECONDS', '-1', /between 5 and 3600/],
    ['AGENT_RATE_LIMIT_PER_MINUTE', '1e9', /between 1 and 10000/],
    ['AGENT_MAX_CONCURRENT_RUNS_PER_USER', '0', /between 1 and 1000/],
    ['MCP_CALLS_PER_KEY_PER_MINUTE', '-5', /between 1 and 1000000/],
    ['BEDROCK_BASE_URL', 'bedrock.local', /./],
    ['OTEL_EXPORTER_OTLP_ENDPOINT', 'http://', /./],
  ];

  it.each(cases)('%s=%j', (name, value, detail) => {
    const message = errorOf(() => parseEnv({ [name]: value }));
    expect(message).toMatch(/^Invalid environment configuration/);
    const line = message.split('\n').find((l) => l.trim().startsWith(`${name}:`));
    expect(line, `no line for ${name} in:\n${message}`).toBeDefined();
    expect(line).toMatch(detail);
    // Only the offending variable is named.
    expect(message.split('\n').filter((l) => /^\s+\w+:/.test(l))).toHaveLength(1);
  });

  it('names every offending variable at once', () => {
    const message = errorOf(() =>
      parseEnv({ DATABASE_URL: 'sqlite://x', AGENT_MAX_STEPS: '0', NEXTAUTH_SECRET: 'short' }),
    );
    for (const name of ['DATABASE_URL', 'AGENT_MAX_STEPS', 'NEXTAUTH_SECRET']) expect(message).toContain(`  ${name}:`);
  });

  it('does not echo secret values in the message', () => {
    const message = errorOf(() => parseEnv({ NEXTAUTH_SECRET: 'hunter2-secret' }));
    expect(message).toContain('NEXTAUTH_SECRET');
    expect(message).not.toContain('hunter2-secret');
  });
});

describe('production', () => {
  it('refuses to start without NEXTAUTH_SECRET and MCP_OVERRIDE_SECRET', async () => {
    const prodParse = await productionParseEnv();
    const message = errorOf(() => prodParse({ NODE_ENV: 'production' }));
    expect(message).toContain('NEXTAUTH_SECRET: NEXTAUTH_SECRET is required in production');
    expect(message).toContain('MCP_OVERRIDE_SECRET: MCP_OVERRIDE_SECRET is required in production');
  });

  it('names only the missing secret', async () => {
    const prodParse = await productionParseEnv();
    const message = errorOf(() => prodParse({ NODE_ENV: 'production', NEXTAUTH_SECRET: SECRET_A }));
    expect(message).toContain('MCP_OVERRIDE_SECRET');
    expect(message).not.toContain('NEXTAUTH_SECRET');
  });

  it('refuses short secrets and accepts real ones (never the development secret)', async () => {
    const prodParse = await productionParseEnv();
    expect(
      errorOf(() => prodParse({ NODE_ENV: 'production', NEXTAUTH_SECRET: 'short', MCP_OVERRIDE_SECRET: SECRET_B })),
    ).toMatch(/NEXTAUTH_SECRET: must be at least 32 characters/);
    const e = prodParse({ NODE_ENV: 'production', NEXTAUTH_SECRET: SECRET_A, MCP_OVERRIDE_SECRET: SECRET_B });
    expect(e.NEXTAUTH_SECRET).toBe(SECRET_A);
    expect(e.MCP_OVERRIDE_SECRET).toBe(SECRET_B);
    expect(e.NEXTAUTH_SECRET).not.toBe(parseEnv({}).NEXTAUTH_SECRET);
  });

  it('refuses the published development secrets', async () => {
    const prodParse = await productionParseEnv();
    const published = parseEnv({}).NEXTAUTH_SECRET;
    const message = errorOf(() =>
      prodParse({ NODE_ENV: 'production', NEXTAUTH_SECRET: published, MCP_OVERRIDE_SECRET: published }),
    );
    expect(message).toContain('NEXTAUTH_SECRET: is the published development value');
    expect(message).toContain('MCP_OVERRIDE_SECRET: is the published development value');
    expect(message).not.toContain(published);
    // Development keeps accepting it.
    expect(parseEnv({ NEXTAUTH_SECRET: published }).NEXTAUTH_SECRET).toBe(published);
  });

  it('seeds the demo logins only when AUTO_SEED is set explicitly', async () => {
    const prodParse = await productionParseEnv();
    const base = { NODE_ENV: 'production', NEXTAUTH_SECRET: SECRET_A, MCP_OVERRIDE_SECRET: SECRET_B };
    expect(prodParse(base).AUTO_SEED).toBe(false);
    expect(prodParse({ ...base, AUTO_SEED: '' }).AUTO_SEED).toBe(false);
    expect(prodParse({ ...base, AUTO_SEED: '1' }).AUTO_SEED).toBe(true);
    expect(prodParse({ ...base, AUTO_SEED: 'true' }).AUTO_SEED).toBe(true);
    expect(prodParse({ ...base, AUTO_SEED: '0' }).AUTO_SEED).toBe(false);
    // Development: on unless turned off.
    expect(parseEnv({}).AUTO_SEED).toBe(true);
    expect(parseEnv({ AUTO_SEED: '0' }).AUTO_SEED).toBe(false);
  });

  it('`npm start` stops before touching the database and shows which secrets are missing', () => {
    const require = createRequire(import.meta.url);
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      NODE_ENV: 'production',
      PGLITE_DIR: 'memory://',
    };
    const res = spawnSync(process.execPath, [require.resolve('tsx/cli'), 'scripts/prepare-db.ts'], {
      env,
      encoding: 'utf8',
    });
    expect(res.status).toBe(1);
    expect(res.stderr).toContain('NEXTAUTH_SECRET is required in production');
    expect(res.stderr).toContain('MCP_OVERRIDE_SECRET is required in production');
    expect(res.stderr).not.toMatch(/\n\s+at /); // a clear message, not a stack trace
    expect(res.stdout).toBe('');
  });
});

describe('validation at server start (src/instrumentation.ts)', () => {
  async function register(vars: Record<string, string | undefined>): Promise<void> {
    for (const [k, v] of Object.entries(vars)) vi.stubEnv(k, v);
    vi.resetModules();
    const { resetEnvCache } = await import('@/server/env');
    resetEnvCache();
    const mod = await import('@/instrumentation');
    await mod.register();
  }

  it('fails the start of a misconfigured server, naming the variable', async () => {
    await expect(register({ NEXT_RUNTIME: 'nodejs', NEXT_PHASE: undefined, AGENT_MAX_STEPS: '0' })).rejects.toThrow(
      /AGENT_MAX_STEPS: must be an integer/,
    );
    await expect(
      register({
        NEXT_RUNTIME: 'nodejs',
        NEXT_PHASE: undefined,
        NODE_ENV: 'production',
        NEXTAUTH_SECRET: '',
        MCP_OVERRIDE_SECRET: '',
      }),
    ).rejects.toThrow(/NEXTAUTH_SECRET is required in production/);
  });

  it('lets a valid configuration start', async () => {
    await expect(register({ NEXT_RUNTIME: 'nodejs', NEXT_PHASE: undefined })).resolves.toBeUndefined();
  });

  it('does not run while `next build` collects pages, nor in the edge runtime', async () => {
    const bad = { NODE_ENV: 'production', NEXTAUTH_SECRET: '', MCP_OVERRIDE_SECRET: '' };
    await expect(
      register({ ...bad, NEXT_RUNTIME: 'nodejs', NEXT_PHASE: 'phase-production-build' }),
    ).resolves.toBeUndefined();
    await expect(register({ ...bad, NEXT_RUNTIME: 'edge', NEXT_PHASE: undefined })).resolves.toBeUndefined();
  });
});

describe('docs/configuration.md', () => {
  it('documents every variable the app reads (configuration table, or the model providers table)', () => {
    const page = readFileSync(new URL('../../docs/configuration.md', import.meta.url), 'utf8');
    const tables = ['configuration', 'models'].map((name) =>
      page.slice(page.indexOf(`<!-- section:${name} -->`), page.indexOf(`<!-- /section:${name} -->`)),
    );
    for (const t of tables) expect(t.length).toBeGreaterThan(100);
    const undocumented = ENV_VARIABLES.filter(
      (name) => name !== 'NODE_ENV' && !tables.some((t) => t.includes(`\`${name}\``)),
    );
    expect(undocumented).toEqual([]);
  });
});
