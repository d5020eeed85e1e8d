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
  await new Promise<void>((r) => {
    collector.closeAllConnections();
    collector.close(() => r());
  });
});

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  attributes: Array<{ key: string; value: { stringValue?: string; intValue?: number | string; boolValue?: boolean } }>;
}

function exportedSpans(): OtlpSpan[] {
  return received.flatMap((r) => {
    const body = JSON.parse(r.body) as { resourceSpans: Array<{ scopeSpans: Array<{ spans: OtlpSpan[] }> }> };
    return body.resourceSpans.flatMap((rs) => rs.scopeSpans.flatMap((ss) => ss.spans));
  });
}
const attr = (s: OtlpSpan, key: string) => {
  const v = s.attributes.find((a) => a.key === key)?.value;
  return v?.stringValue ?? (v?.intValue !== undefined ? Number(v.intValue) : v?.boolValue);
};

/** The spans of one run: its root and every span carrying its run id. */
function spansOfRun(runId: string) {
  const spans = exportedSpans().filter((s) => attr(s, 'run.id') === runId);
  const root = spans.filter((s) => s.name === 'in_app_agent.run');
  expect(root).toHaveLength(1);
  return { root: root[0]!, children: spans.filter((s) => s.name !== 'in_app_agent.run') };
}

it('exports one trace per run: model calls and tool calls are children of the run span', async () => {
  const res = await postAgent(server.url, project.id, project.users.MEMBER.cookie, userMessageBody('list open issues'));
  const runId = (res.events[0] as { runId: string }).runId;
  await flushTracing();
  const body = received.map((r) => r.body).join('\n');
  expect(received[0]!.path).toBe('/api/public/otel/v1/traces');
  expect(received[0]!.headers.authorization).toBe('Basic cGs6c2s=');
  expect(body).toContain('gen_ai.usage.output_tokens');

  const { root, children } = spansOfRun(runId);
  expect(root.parentSpanId ?? '').toBe('');
  // The run row carries the trace id, so a trace can be found from the review page.
  const run = await (await getPrisma()).agentRun.findUniqueOrThrow({ where: { id: runId } });
  expect(run.traceId).toMatch(/^[0-9a-f]{32}$/);
  expect(root.traceId).toBe(run.traceId);
  // The demo model answers in two model calls around one tool call: one span each.
  const models = children.filter((s) => s.name === 'in_app_agent.model');
  const tools = children.filter((s) => s.name === 'in_app_agent.tool');
  expect(models.map((s) => attr(s, 'gen_ai.step')).sort()).toEqual([0, 1]);
  expect(tools.map((s) => attr(s, 'tool.name'))).toEqual(['list_issues']);
  for (const s of children) {
    expect(s.traceId).toBe(root.traceId);
    expect(s.parentSpanId).toBe(root.spanId);
  }
  for (const m of models) {
    expect(attr(m, 'model.id')).toBe('demo');
    expect(attr(m, 'gen_ai.usage.output_tokens')).toBeGreaterThan(0);
  }
  const total = models.reduce((n, m) => n + Number(attr(m, 'gen_ai.usage.output_tokens')), 0);
  expect(attr(root, 'gen_ai.usage.output_tokens')).toBe(total);
});

it("puts an approved execution in the resume run's trace", async () => {
  const member = project.users.MEMBER;
  const first = await postAgent(
    server.url,
    project.id,
    member.cookie,
    userMessageBody('create an issue titled Traced approval'),
  );
  const fin = first.events.at(-1);
  if (fin?.type !== 'RUN_FINISHED' || fin.outcome?.type !== 'interrupt') throw new Error('expected an interrupt');
  const threadId = (first.events[0] as { threadId: string }).threadId;
  const second = await postAgent(server.url, project.id, member.cookie, {
    threadId,
    messages: [],
    resume: [{ interruptId: fin.outcome.interrupts[0]!.id, status: 'resolved', payload: { approved: true } }],
  });
  const resumeRunId = (second.events[0] as { runId: string }).runId;
  await flushTracing();
  const { root, children } = spansOfRun(resumeRunId);
  const approved = children.find((s) => s.name === 'in_app_agent.tool' && attr(s, 'tool.approved') === true);
  expect(approved).toBeDefined();
  expect(attr(approved!, 'tool.name')).toBe('create_issue');
  expect([approved!.traceId, approved!.parentSpanId]).toEqual([root.traceId, root.spanId]);
  // A different run, a different trace.
  expect(root.traceId).not.toBe(spansOfRun((first.events[0] as { runId: string }).runId).root.traceId);
});
