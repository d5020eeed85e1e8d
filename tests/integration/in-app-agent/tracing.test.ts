// Spans for run, model and tool calls are exported over OTLP/HTTP when an endpoint is configured.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { flushTracing } from '@/features/in-app-agent/server/instrumentation';
import { getPrisma } from '@/server/db';
import { resetEnvCache } from '@/server/env';
import { postAgent, userMessageBody } from '../../helpers/agent';
import { createIssue, createProject, type TestProject } from '../../helpers/fixtures';
import { startTestServer, type TestServer } from '../../helpers/http';

let server: TestServer;
let collector: http.Server;
const received: Array<{ path: string; headers: http.IncomingHttpHeaders; body: string }> = [];
let project: TestProject;

beforeAll(async () => {
  collector = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    received.push({ path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
  await new Promise<void>((r) => collector.listen(0, '127.0.0.1', r));
  process.env.OTEL_EXPORTER_OTLP_ENDPOINT = `http://127.0.0.1:${(collector.address() as AddressInfo).port}/api/public/otel`;
  process.env.OTEL_EXPORTER_OTLP_HEADERS = 'Authorization=Basic%20cGs6c2s=';
  delete process.env.AGENT_MODEL_PROVIDER;
  resetEnvCache();
  server = await startTestServer();
  project = await createProject('Traced');
  await createIssue(project.id, { title: 'Traced issue' });
});
afterAll(async () => {
  await server?.close();
  await new Promise<void>((r) => (collector.closeAllConnections(), collector.close(() => r())));
});

it('exports run, model and tool spans with ids, model and usage to the OTLP endpoint', async () => {
  const res = await postAgent(server.url, project.id, project.users.MEMBER.cookie, userMessageBody('list open issues'));
  const runId = (res.events[0] as { runId: string }).runId;
  await flushTracing();
  const body = received.map((r) => r.body).join('\n');
  expect(received[0]!.path).toBe('/api/public/otel/v1/traces');
  expect(received[0]!.headers.authorization).toBe('Basic cGs6c2s=');
  expect(body).toContain('in_app_agent.run');
  expect(body).toContain('in_app_agent.model');
  expect(body).toContain('in_app_agent.tool');
  expect(body).toContain(runId);
  expect(body).toContain('gen_ai.usage.output_tokens');
  // The run row carries the trace id, so a trace can be found from the review page.
  const run = await (await getPrisma()).agentRun.findUniqueOrThrow({ where: { id: runId } });
  expect(run.traceId).toMatch(/^[0-9a-f]{32}$/);
});
