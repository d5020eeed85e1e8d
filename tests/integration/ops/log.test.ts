// The structured log, read in-process (a destination injected into the one logger): a run's lines
// name its run id and trace id; a refused request names its code and request, without an
// async-local storage of the log's own; and no secret reaches the log, neither a run key's secret
// used against the MCP endpoint nor secrets handed to the logger.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintAgentKey } from '@/server/api-keys';
import { getPrisma } from '@/server/db';
import { readDiagnostics, trackAsyncLocalStorages } from '@/server/diagnostics';
import { resetEnvCache } from '@/server/env';
import { childLog, log, setLogDestination } from '@/server/log';
import { postAgent, userMessageBody, useScriptedModelEnv } from '../../helpers/agent';
import { startFakeOpenAI, type FakeServer } from '../../helpers/fake-models';
import { createProject, type TestProject } from '../../helpers/fixtures';
import { startTestServer, type TestServer } from '../../helpers/http';

// Counts the async-local storages taken into use from here on (Node 20; null where not listed).
trackAsyncLocalStorages();

let lines: string[] = [];
const sink = new Writable({
  write(chunk: Buffer, _enc, done) {
    lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
    done();
  },
});
let server: TestServer;
let model: FakeServer;
let collector: http.Server;
let project: TestProject;

beforeAll(async () => {
  // A trace collector that accepts everything, so runs have trace ids.
  collector = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'));
  });
  await new Promise<void>((r) => collector.listen(0, '127.0.0.1', r));
  process.env.OTEL_EXPORTER_OTLP_ENDPOINT = `http://127.0.0.1:${(collector.address() as AddressInfo).port}/v1/traces`;
  model = await startFakeOpenAI(() => ({ text: ['All ', 'good.'] }));
  useScriptedModelEnv(model.url, { LOG_LEVEL: 'info' });
  resetEnvCache();
  setLogDestination(sink);
  server = await startTestServer();
  project = await createProject('Logs');
});

afterAll(async () => {
  setLogDestination(undefined);
  delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
  resetEnvCache();
  await server?.close();
  await model?.close();
  await new Promise<void>((r) => {
    collector.closeAllConnections();
    collector.close(() => r());
  });
});

const parsed = () => lines.map((l) => JSON.parse(l) as Record<string, unknown>);

describe('the structured log', () => {
  // First in the file: no request has been served yet in this process.
  it('logs a refused request with its code, the request id the proxy sent and who asked, without an async-local storage', async () => {
    lines = [];
    const storages = readDiagnostics().asyncLocalStorages;
    const res = await postAgent(
      server.url,
      project.id,
      project.users.MEMBER.cookie,
      {},
      { headers: { 'x-request-id': 'proxy-req-42' } },
    );
    expect(res.status).toBe(400);
    expect(parsed()).toContainEqual(
      expect.objectContaining({
        event: 'request.refused',
        status: 400,
        code: 'NO_USER_MESSAGE',
        requestId: 'proxy-req-42',
        projectId: project.id,
        userId: project.users.MEMBER.id,
      }),
    );
    // The log keeps no storage of its own: on Node 20 each storage a process has used adds work to
    // every promise it creates afterwards.
    expect(readDiagnostics().asyncLocalStorages).toBe(storages);
  });

  it("names a run's ids and trace id, one JSON line per event, with level, time and instance", async () => {
    lines = [];
    const res = await postAgent(server.url, project.id, project.users.MEMBER.cookie, userMessageBody('hello there'));
    expect(res.status).toBe(200);
    const runId = (res.events[0] as { runId: string }).runId;
    const prisma = await getPrisma();
    const run = await prisma.agentRun.findUniqueOrThrow({ where: { id: runId } });
    expect(run.traceId).toMatch(/^[0-9a-f]{32}$/);

    const ofRun = parsed().filter((l) => l.runId === runId);
    const started = ofRun.find((l) => l.event === 'run.started');
    const finished = ofRun.find((l) => l.event === 'run.finished');
    for (const line of [started, finished]) {
      expect(line).toMatchObject({
        level: 'info',
        runId,
        traceId: run.traceId,
        projectId: project.id,
        userId: project.users.MEMBER.id,
        requestId: expect.stringMatching(/^[0-9a-f]{24}$/),
        instance: expect.any(String),
        time: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
      });
    }
    expect(finished).toMatchObject({ status: 'COMPLETED' });
    // Never the conversation's content.
    expect(lines.join('\n')).not.toContain('hello there');
    expect(lines.join('\n')).not.toContain('All good.');
  });

  it("never writes a run key's secret, nor secrets handed to the logger", async () => {
    lines = [];
    const prisma = await getPrisma();
    const { secret } = await mintAgentKey(prisma, {
      projectId: project.id,
      userId: project.users.MEMBER.id,
      runId: 'run_log_test',
      ttlSeconds: 60,
    });
    const mcp = (headers: Record<string, string>, body: unknown) =>
      fetch(`${server.url}/api/public/mcp`, { method: 'POST', headers, body: JSON.stringify(body) });
    const auth = { authorization: `Bearer ${secret}`, accept: 'application/json, text/event-stream' };
    // A good call, a refused one (wrong media type), and one with the secret where no key belongs.
    expect(
      (await mcp({ ...auth, 'content-type': 'application/json' }, { jsonrpc: '2.0', id: 1, method: 'tools/list' }))
        .status,
    ).toBe(200);
    expect((await mcp({ ...auth, 'content-type': 'text/plain' }, {})).status).toBe(415);
    expect(
      (await mcp({ authorization: `Bearer ${secret}x`, accept: auth.accept, 'content-type': 'application/json' }, {}))
        .status,
    ).toBe(401);
    // Code that hands secrets to the logger by mistake: fields, nested fields, free text.
    log().warn(
      {
        authorization: `Bearer ${secret}`,
        headers: { cookie: 'next-auth.session-token=abc' },
        key: { secret },
        note: `the key ${secret} failed`,
      },
      `calling with ${secret}`,
    );
    log().error({ url: 'postgresql://tracker:hunter2secret@db:5432/tracker' }, 'connect failed');
    const out = lines.join('\n');
    expect(parsed().some((l) => l.event === 'request.refused' && l.code === 'UNSUPPORTED_MEDIA_TYPE')).toBe(true);
    expect(out).not.toContain(secret);
    expect(out).not.toContain(secret.slice(3)); // not even without its prefix
    expect(out).not.toContain('next-auth.session-token=abc');
    expect(out).not.toContain('hunter2secret');
    expect(out).toContain('[redacted]');
  });

  it("censors body- and secret-bearing fields at any level of a line, and in a child logger's bound fields", () => {
    lines = [];
    // Text that is no secret by its shape: only the field's name says it is a body.
    const written = 'Please move the launch to Friday, the customer is upset';
    childLog({ runId: 'run_bound', token: 'plain-session-value', note: 'Bearer abcdefghijklmnop' }).info(
      {
        event: 'test.censor',
        content: written,
        step: { args: { title: written } },
        calls: [{ name: 'create_issue', body: written }],
        count: 3,
      },
      'a line with bodies',
    );
    const out = lines.join('\n');
    expect(out).not.toContain(written);
    expect(out).not.toContain('plain-session-value');
    expect(out).not.toContain('abcdefghijklmnop');
    const [line] = parsed();
    // What is no body nor secret is written as it was.
    expect(line).toMatchObject({
      event: 'test.censor',
      runId: 'run_bound',
      token: '[redacted]',
      note: 'Bearer [redacted]',
      content: '[redacted]',
      step: { args: '[redacted]' },
      calls: [{ name: 'create_issue', body: '[redacted]' }],
      count: 3,
    });
  });
});
