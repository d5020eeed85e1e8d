import 'server-only';
import { z } from 'zod';

/**
 * The one place where process environment is read and validated. Invalid values fail at start-up
 * with a message naming the variable. Secrets have no usable default in production.
 */
const DEV_SECRET = 'dev-only-insecure-secret-change-me-0123456789';
/** Secret values published with the source code: never accepted in production. */
const PUBLISHED_SECRETS: ReadonlySet<string> = new Set([DEV_SECRET]);

const optionalString = z
  .string()
  .optional()
  .transform((v) => (v === undefined || v.trim() === '' ? undefined : v.trim()));

const intIn = (min: number, max: number, dflt: number) =>
  z
    .string()
    .optional()
    .transform((v, ctx) => {
      if (v === undefined || v.trim() === '') return dflt;
      const n = Number(v);
      if (!Number.isInteger(n) || n < min || n > max) {
        ctx.addIssue({ code: 'custom', message: `must be an integer between ${min} and ${max}` });
        return z.NEVER;
      }
      return n;
    });

/** An on/off setting: 1/true or 0/false; unset (or blank) is undefined, the default of whoever reads it. */
const flag = z
  .enum(['1', '0', 'true', 'false', ''])
  .optional()
  .transform((v) => (v === undefined || v === '' ? undefined : v === '1' || v === 'true'));

/** A price: a non-negative decimal number (US dollars per million tokens), or unset. */
const price = optionalString.transform((v, ctx) => {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!/^\d+(\.\d+)?$/.test(v) || !Number.isFinite(n)) {
    ctx.addIssue({ code: 'custom', message: 'must be a non-negative decimal number (US dollars per million tokens)' });
    return z.NEVER;
  }
  return n;
});

/** Secrets: required in production; a fixed, clearly insecure value in development and tests. */
const secret = (name: string) =>
  optionalString.transform((v, ctx) => {
    if (v === undefined) {
      if (productionParse) {
        ctx.addIssue({ code: 'custom', message: `${name} is required in production` });
        return z.NEVER;
      }
      return DEV_SECRET;
    }
    if (v.length < 32) {
      ctx.addIssue({ code: 'custom', message: 'must be at least 32 characters' });
      return z.NEVER;
    }
    if (productionParse && PUBLISHED_SECRETS.has(v)) {
      ctx.addIssue({
        code: 'custom',
        message: 'is the published development value; set a secret of your own in production',
      });
      return z.NEVER;
    }
    return v;
  });

const EnvSchema = z.object({
  NODE_ENV: z.enum(['development', 'production', 'test']).default('development'),
  /** PostgreSQL connection string. Unset: embedded PGlite under PGLITE_DIR. */
  DATABASE_URL: optionalString.pipe(
    z
      .string()
      .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// or postgresql:// URL')
      .optional(),
  ),
  /** Where the embedded database lives; `memory://` keeps it in memory (tests). Blank: the default. */
  PGLITE_DIR: optionalString.transform((v) => v ?? '.data/pglite'),
  /**
   * Seed the demo project (well-known demo logins) into an empty database at start. Unset: on in
   * development, OFF in production, where only an explicit 1/true seeds.
   */
  AUTO_SEED: z
    .enum(['1', '0', 'true', 'false', ''])
    .optional()
    .transform((v) => (v === undefined || v === '' ? !productionParse : v === '1' || v === 'true')),
  NEXTAUTH_SECRET: secret('NEXTAUTH_SECRET'),
  NEXTAUTH_URL: optionalString.pipe(z.url().optional()),
  /** Secret used to sign single-use tool-call overrides (HMAC). */
  MCP_OVERRIDE_SECRET: secret('MCP_OVERRIDE_SECRET'),
  GITHUB_ID: optionalString,
  GITHUB_SECRET: optionalString,
  GOOGLE_CLIENT_ID: optionalString,
  GOOGLE_CLIENT_SECRET: optionalString,

  /** Model provider: unset picks bedrock when AWS credentials are present, else demo. */
  AGENT_MODEL_PROVIDER: z.enum(['bedrock', 'openai-compatible', 'demo']).optional(),
  AWS_REGION: optionalString,
  AWS_ACCESS_KEY_ID: optionalString,
  AWS_SECRET_ACCESS_KEY: optionalString,
  AWS_SESSION_TOKEN: optionalString,
  BEDROCK_MODEL_ID: z.string().default('anthropic.claude-3-5-haiku-20241022-v1:0'),
  BEDROCK_BASE_URL: optionalString.pipe(z.url().optional()),
  OPENAI_COMPATIBLE_BASE_URL: optionalString.pipe(z.url().optional()),
  OPENAI_COMPATIBLE_API_KEY: optionalString,
  OPENAI_COMPATIBLE_MODEL: optionalString,

  /** Agent limits. */
  AGENT_MAX_STEPS: intIn(1, 50, 8),
  /** Retries of a failed model call (throttling, 5xx) before the run fails. */
  AGENT_MODEL_MAX_RETRIES: intIn(0, 10, 2),
  AGENT_CONTEXT_TOKENS: intIn(1000, 1_000_000, 24_000),
  AGENT_RUN_STALE_SECONDS: intIn(5, 3600, 60),
  AGENT_RUN_LEASE_SECONDS: intIn(3, 300, 8),
  AGENT_APPROVAL_TTL_SECONDS: intIn(10, 86_400, 600),
  /** Assistant runs a user may start per minute (counted in the limits store, across instances). */
  AGENT_RATE_LIMIT_PER_MINUTE: intIn(1, 10_000, 20),
  /** Assistant runs of one user RUNNING at once, across instances (checked when a run opens). */
  AGENT_MAX_CONCURRENT_RUNS_PER_USER: intIn(1, 1000, 3),
  /** A model stream silent this long while no tool runs ends the run with MODEL_TIMEOUT. */
  AGENT_MODEL_IDLE_TIMEOUT_SECONDS: intIn(5, 3600, 120),
  AGENT_MCP_URL: optionalString.pipe(z.url().optional()),
  /** Prices of the configured model in US dollars per million input / output tokens (both or neither). */
  AGENT_MODEL_PRICE_INPUT: price,
  AGENT_MODEL_PRICE_OUTPUT: price,
  /**
   * Whether the configured model reads images / PDF documents attached to a message. Unset: the
   * provider's default (demo and bedrock: yes; openai-compatible: no, set 1 for a vision model).
   */
  AGENT_MODEL_VISION: flag,
  AGENT_MODEL_DOCUMENTS: flag,
  /** Largest attached file, counted while it is read (bytes). */
  AGENT_ATTACHMENT_MAX_BYTES: intIn(1024, 100 * 1024 * 1024, 10 * 1024 * 1024),
  /** Files one message may attach. */
  AGENT_ATTACHMENTS_PER_MESSAGE: intIn(1, 50, 5),
  /** Bytes of attachments one conversation may hold (as stored). */
  AGENT_ATTACHMENT_BYTES_PER_CONVERSATION: intIn(1024, 2_000_000_000, 50 * 1024 * 1024),
  /**
   * An S3-compatible object store for attachment bytes (default: the database). Credentials are
   * optional (the AWS SDK's default chain then applies); the two key settings come together.
   */
  AGENT_ATTACHMENT_S3_BUCKET: optionalString,
  AGENT_ATTACHMENT_S3_REGION: optionalString,
  AGENT_ATTACHMENT_S3_ENDPOINT: optionalString.pipe(z.url().optional()),
  AGENT_ATTACHMENT_S3_ACCESS_KEY_ID: optionalString,
  AGENT_ATTACHMENT_S3_SECRET_ACCESS_KEY: optionalString,
  /** Path-style addressing (`endpoint/bucket/key`), which MinIO and most self-hosted stores need. */
  AGENT_ATTACHMENT_S3_FORCE_PATH_STYLE: flag,

  /**
   * How many reverse proxies in front of the app append to X-Forwarded-For. 0 (default): the client
   * address is unknown (sign-in limits are per account only); n: the n-th address from the right.
   */
  TRUST_PROXY: intIn(0, 10, 0),
  /** Failed sign-ins allowed per account (and per client address) in SIGNIN_WINDOW_MINUTES. */
  SIGNIN_ACCOUNT_MAX_FAILURES: intIn(1, 1000, 5),
  SIGNIN_ADDRESS_MAX_FAILURES: intIn(1, 100_000, 30),
  SIGNIN_WINDOW_MINUTES: intIn(1, 1440, 15),
  /** Password hashes (scrypt, 128 MiB each) running at once per process, and waiting for a slot. */
  PASSWORD_HASH_CONCURRENCY: intIn(1, 64, 2),
  PASSWORD_HASH_QUEUE: intIn(0, 1000, 16),
  /** tRPC mutations per signed-in user and minute (shared by every instance). */
  TRPC_MUTATIONS_PER_MINUTE: intIn(1, 100_000, 120),
  /** MCP tools/call requests per project API key (or OAuth grant) and minute (shared by every instance). */
  MCP_CALLS_PER_KEY_PER_MINUTE: intIn(1, 1_000_000, 120),

  /** MCP authorization (OAuth 2.1): lifetimes of access tokens, refresh tokens and codes. */
  MCP_OAUTH_ACCESS_TOKEN_TTL_SECONDS: intIn(60, 86_400, 3600),
  MCP_OAUTH_REFRESH_TOKEN_TTL_DAYS: intIn(1, 365, 30),
  MCP_OAUTH_CODE_TTL_SECONDS: intIn(10, 600, 60),
  /**
   * A refresh token used a second time within this many seconds of its rotation is refused without
   * revoking its grant (two requests racing); later, the replay revokes the grant and its tokens.
   */
  MCP_OAUTH_REFRESH_REUSE_GRACE_SECONDS: intIn(0, 300, 10),
  /** Client registrations (RFC 7591) per client address and minute, or per instance and minute when no address is known. */
  MCP_OAUTH_REGISTRATIONS_PER_MINUTE: intIn(1, 10_000, 20),
  /**
   * Tests only: Client ID Metadata Documents may be served over plain http from a loopback address
   * (production requires https and a public address). Refused unless NODE_ENV is test.
   */
  MCP_OAUTH_TEST_LOOPBACK_CLIENT_IDS: z
    .enum(['1', '0', ''])
    .optional()
    .transform((v, ctx) => {
      const on = v === '1';
      if (on && testOnlyRefused) {
        ctx.addIssue({ code: 'custom', message: 'is a test setting: only accepted when NODE_ENV is test' });
        return z.NEVER;
      }
      return on;
    }),

  /** Connections of this instance's PostgreSQL pool (each instance also holds one fan-out connection). */
  DATABASE_POOL_MAX: intIn(1, 1000, 10),
  /**
   * The run's statements as named prepared statements on PostgreSQL (parsed and planned once per
   * connection). Set 0 behind a transaction-mode pooler that cannot keep them (PgBouncer before 1.21).
   */
  DATABASE_PREPARED_STATEMENTS: z
    .enum(['1', '0', 'true', 'false', ''])
    .optional()
    .transform((v) => v !== '0' && v !== 'false'),
  /** On SIGTERM/SIGINT, running answers get this long to finish before they are stopped. */
  SHUTDOWN_DRAIN_SECONDS: intIn(0, 3600, 30),
  /** Deleted assistant conversations are purged (with their events, approvals, feedback) after this. */
  AGENT_RETENTION_DAYS: intIn(1, 36_500, 30),
  /** MCP audit rows (and expired or revoked run keys) are purged after this. */
  AUDIT_RETENTION_DAYS: intIn(1, 36_500, 90),
  /** How often one instance runs the retention purge. */
  RETENTION_PURGE_INTERVAL_SECONDS: intIn(10, 7 * 86_400, 3600),
  /** Structured log level; unset: info (tests: warn). */
  LOG_LEVEL: optionalString.pipe(z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).optional()),

  /** OpenTelemetry: spans are exported only when an endpoint is set. */
  OTEL_EXPORTER_OTLP_ENDPOINT: optionalString.pipe(z.url().optional()),
  OTEL_EXPORTER_OTLP_HEADERS: optionalString,

  /** Enables `GET /api/diagnostics` for requests carrying this bearer token (soak tests, operators). */
  DIAGNOSTICS_TOKEN: optionalString.pipe(z.string().min(16, 'must be at least 16 characters').optional()),
});

export type Env = z.infer<typeof EnvSchema>;

/** Every variable the app reads, in the order the schema declares them (documentation checks). */
export const ENV_VARIABLES: readonly string[] = Object.keys(EnvSchema.shape);

// Set for the duration of one parse: whether the source being parsed is a production environment,
// and whether test-only settings are refused (anything but NODE_ENV=test).
let productionParse = false;
let testOnlyRefused = true;

/** Settings that come in pairs (an OAuth provider, a model price): both or neither. */
const OAUTH_PAIRS: ReadonlyArray<readonly [string, string]> = [
  ['GITHUB_ID', 'GITHUB_SECRET'],
  ['GOOGLE_CLIENT_ID', 'GOOGLE_CLIENT_SECRET'],
  ['AGENT_MODEL_PRICE_INPUT', 'AGENT_MODEL_PRICE_OUTPUT'],
  ['AGENT_ATTACHMENT_S3_ACCESS_KEY_ID', 'AGENT_ATTACHMENT_S3_SECRET_ACCESS_KEY'],
];

function isSet(v: string | undefined): boolean {
  return v !== undefined && v.trim() !== '';
}

/** A half-configured OAuth pair names the missing variable. */
function pairIssues(source: Record<string, string | undefined>): string[] {
  const lines: string[] = [];
  for (const [a, b] of OAUTH_PAIRS) {
    if (isSet(source[a]) && !isSet(source[b])) lines.push(`  ${b}: is required when ${a} is set`);
    if (isSet(source[b]) && !isSet(source[a])) lines.push(`  ${a}: is required when ${b} is set`);
  }
  return lines;
}

export function parseEnv(source: Record<string, string | undefined>): Env {
  productionParse = source.NODE_ENV === 'production';
  testOnlyRefused = source.NODE_ENV !== 'test';
  const res = EnvSchema.safeParse(source);
  const lines = [
    ...(res.success ? [] : res.error.issues.map((i) => `  ${i.path.join('.') || '(env)'}: ${i.message}`)),
    ...pairIssues(source),
  ];
  if (!res.success || lines.length) {
    throw new Error(`Invalid environment configuration:\n${lines.join('\n')}`);
  }
  return res.data;
}

let cached: Env | undefined;
/** Validated environment, parsed once per process. */
export function env(): Env {
  cached ??= parseEnv(process.env);
  return cached;
}
/** Tests change the environment between cases; this forgets the parsed copy. */
export function resetEnvCache(): void {
  cached = undefined;
}
