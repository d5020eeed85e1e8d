// Kills the instance writing an answer at random points and checks that every answer still ends
// once, whole, with nothing done twice; prints JSON with how long users waited.
//
// Three production instances (`npm start`, the production build) on a fresh database of a
// PostgreSQL server, behind nginx with deploy/nginx.conf, answering with a scripted model on the
// OpenAI-compatible wire: each answer lists the issues (a tool call), then streams 120 words (about 3 s). For
// each of `--runs` answers (default 20), a seeded random delay after it started, the instance that
// owns it is killed (-9) if it is still running; a client follows the answer through the proxy as the panel does. Measured:
// kill → the first event of the new owner (`resumed`), kill → the end, and the answer's outcome.
// The lease is the product's default (AGENT_RUN_LEASE_SECONDS, 8 s) unless `--lease` says otherwise.
//
//   npm run build
//   DATABASE_URL=postgresql://postgres@127.0.0.1:5432/postgres npx tsx scripts/chaos-takeover.ts --runs 20 --seed 7
import pg from 'pg';
import { followToEnd, startRunStream, userMessageBody, type PositionedSse } from '../tests/helpers/agent';
import { startFakeOpenAI, type ScriptedTurn } from '../tests/helpers/fake-models';
import { createProject } from '../tests/helpers/fixtures';
import { Cluster } from '../tests/deploy/takeover-cluster';

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  const v = i >= 0 ? Number(process.argv[i + 1]) : fallback;
  if (!Number.isFinite(v) || v < 0) throw new Error(`--${name} must be a number`);
  return v;
}

/** A small seeded generator (mulberry32): the same seed kills at the same points. */
function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const percentile = (xs: number[], p: number) => {
  if (!xs.length) return null;
  const s = [...xs].sort((a, b) => a - b);
  return Math.round(s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)]!);
};

const WORDS = Array.from({ length: 120 }, (_, i) => `word${i} `);

async function main(): Promise<void> {
  const serverUrl = process.env.DATABASE_URL;
  if (!serverUrl?.startsWith('postgres')) throw new Error('DATABASE_URL must name a PostgreSQL server');
  const runs = arg('runs', 20);
  const seed = arg('seed', 7);
  const lease = arg('lease', 0);
  const rand = random(seed);
  process.env.NEXTAUTH_SECRET ??= 'chaos-takeover-secret-that-is-long-enough-000';
  process.env.MCP_OVERRIDE_SECRET ??= 'chaos-takeover-override-secret-long-enough-00';

  // Step 0 lists the issues; step 1 (after the tool's result) streams the answer.
  const model = await startFakeOpenAI((body) => {
    const messages = (body.messages ?? []) as Array<{ role: string }>;
    const turn: ScriptedTurn =
      messages.at(-1)?.role === 'tool'
        ? { text: WORDS, delayMs: 25 }
        : { text: ['Looking. '], toolCalls: [{ name: 'list_issues', args: {} }], delayMs: 25 };
    return turn;
  });
  const cluster = new Cluster({
    serverUrl,
    modelUrl: model.url,
    ...(lease ? { env: { AGENT_RUN_LEASE_SECONDS: String(lease) } } : {}),
  });
  const results: Array<{
    killAfterMs: number;
    killToResumedMs: number | null;
    killToEndMs: number | null;
    outcome: string;
    whole: boolean;
    generation: number;
  }> = [];
  try {
    await cluster.start();
    process.env.DATABASE_URL = cluster.databaseUrl;
    const project = await createProject('Chaos');
    const cookie = project.users.MEMBER.cookie;
    const db = new pg.Client({ connectionString: cluster.databaseUrl });
    await db.connect();
    for (let n = 0; n < runs; n++) {
      const killAfterMs = Math.round(200 + rand() * 2_800);
      const started = await startRunStream(
        cluster.proxyUrl,
        project.id,
        cookie,
        userMessageBody(`chaos ${n}`),
        (ev) => ev.length >= 1,
      );
      const { runId } = started.events[0]!.event as { runId: string };
      const t0 = Date.now();
      let killedAt = 0;
      let resumedAt: number | null = null;
      const killing = (async () => {
        await new Promise((r) => setTimeout(r, killAfterMs));
        const { rows } = await db.query<{ status: string }>('SELECT "status"::text FROM "AgentRun" WHERE "id" = $1', [
          runId,
        ]);
        if (rows[0]?.status !== 'RUNNING') return;
        const owner = await cluster.ownerOf(runId, db).catch(() => null);
        if (!owner) return;
        killedAt = Date.now();
        await cluster.signal(owner, 'SIGKILL');
      })();
      const events: PositionedSse[] = await followToEnd([cluster.proxyUrl], project.id, runId, cookie, {
        after: 1,
        onEvents: (ev) => {
          if (
            resumedAt === null &&
            ev.some((e) => e.event.type === 'CUSTOM' && e.event.name === 'in-app-agent.resumed')
          )
            resumedAt = Date.now();
        },
        timeoutMs: 120_000,
      });
      const endedAt = Date.now();
      await killing;
      const end = events.at(-1)?.event as { type: string; outcome?: { type: string } } | undefined;
      const { rows } = await db.query<{ generation: number; text: string }>(
        `SELECT r."generation", coalesce(string_agg(e."payload"->>'content', '' ORDER BY e."seq")
           FILTER (WHERE e."payload"->>'type' = 'TEXT_MESSAGE' AND e."payload"->>'role' = 'assistant'), '') AS "text"
         FROM "AgentRun" r LEFT JOIN "AgentEvent" e ON e."runId" = r."id" WHERE r."id" = $1 GROUP BY r."generation"`,
        [runId],
      );
      results.push({
        killAfterMs: killedAt ? killedAt - t0 : -1,
        killToResumedMs: killedAt && resumedAt ? resumedAt - killedAt : null,
        killToEndMs: killedAt ? endedAt - killedAt : null,
        outcome: end?.type === 'RUN_FINISHED' ? (end.outcome?.type ?? 'unknown') : (end?.type ?? 'none'),
        whole: rows[0]?.text === `Looking. ${WORDS.join('')}`,
        generation: rows[0]?.generation ?? 0,
      });
      await cluster.heal();
    }
    await db.end();
  } finally {
    await cluster.stop();
    await model.close();
  }
  const killed = results.filter((r) => r.killAfterMs >= 0);
  const resumed = killed.flatMap((r) => (r.killToResumedMs === null ? [] : [r.killToResumedMs]));
  const ended = killed.flatMap((r) => (r.killToEndMs === null ? [] : [r.killToEndMs]));
  const report = {
    runs,
    seed,
    leaseSeconds: lease || 8,
    killed: killed.length,
    completed: results.filter((r) => r.outcome === 'success').length,
    whole: results.filter((r) => r.whole).length,
    takenOver: results.filter((r) => r.generation > 1).length,
    killToResumedMs: { p50: percentile(resumed, 50), p99: percentile(resumed, 99), max: percentile(resumed, 100) },
    killToEndMs: { p50: percentile(ended, 50), p99: percentile(ended, 99) },
    runsDetail: results,
  };
  console.log(JSON.stringify(report, null, 2));
  if (report.completed !== runs || report.whole !== runs) process.exitCode = 1;
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
