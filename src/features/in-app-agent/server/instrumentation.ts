/**
 * OpenTelemetry spans for runs, model calls and tool calls. Spans are exported over OTLP/HTTP only
 * when OTEL_EXPORTER_OTLP_ENDPOINT is set (Langfuse's OTLP endpoint works); otherwise the API's
 * no-op tracer is used and nothing leaves the process.
 *
 * One trace per run: the run span is the root; every model call (one per agent step) and every
 * tool call is its child, carrying `run.id`. Parents are passed explicitly (no context manager is
 * needed, so it works without async-hooks and across every await).
 */
import {
  context,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Span,
  type Tracer,
} from '@opentelemetry/api';
import { type Env, processWide } from '../host';

interface Holder {
  configured?: boolean;
  provider?: { forceFlush(): Promise<void>; shutdown(): Promise<void> };
}
const holder: Holder = processWide<Holder>('__inAppAgentOtel', () => ({}));

function parseHeaders(raw: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const pair of (raw ?? '').split(',')) {
    const idx = pair.indexOf('=');
    if (idx > 0) out[decodeURIComponent(pair.slice(0, idx).trim())] = decodeURIComponent(pair.slice(idx + 1).trim());
  }
  return out;
}

/** Sets up the OTLP exporter once per process when an endpoint is configured. */
export async function configureTracing(e: Env): Promise<void> {
  if (holder.configured) return;
  holder.configured = true;
  if (!e.OTEL_EXPORTER_OTLP_ENDPOINT) return;
  const [{ BasicTracerProvider, BatchSpanProcessor }, { OTLPTraceExporter }] = await Promise.all([
    import('@opentelemetry/sdk-trace-base'),
    import('@opentelemetry/exporter-trace-otlp-http'),
  ]);
  const base = e.OTEL_EXPORTER_OTLP_ENDPOINT.replace(/\/+$/, '');
  const exporter = new OTLPTraceExporter({
    url: base.endsWith('/v1/traces') ? base : `${base}/v1/traces`,
    headers: parseHeaders(e.OTEL_EXPORTER_OTLP_HEADERS),
  });
  const provider = new BasicTracerProvider({
    spanProcessors: [new BatchSpanProcessor(exporter, { scheduledDelayMillis: 1000 })],
  });
  trace.setGlobalTracerProvider(provider);
  holder.provider = provider;
}

/** Flushes pending spans (tests, shutdown). */
export async function flushTracing(): Promise<void> {
  await holder.provider?.forceFlush();
}

export function tracer(): Tracer {
  return trace.getTracer('in-app-agent');
}

/** The trace id of a span, or undefined when tracing is off (no-op spans have an all-zero id). */
export function traceIdOf(span: Span): string | undefined {
  const id = span.spanContext().traceId;
  return /^0+$/.test(id) ? undefined : id;
}

export function endSpan(span: Span, error?: { code?: string; message: string }): void {
  if (error) {
    span.setStatus({ code: SpanStatusCode.ERROR, message: error.message });
    if (error.code) span.setAttribute('error.code', error.code);
  } else span.setStatus({ code: SpanStatusCode.OK });
  span.end();
}

/** The run's span and the context its children hang from. */
export class RunTrace {
  private readonly parent: Context;
  private runId: string | undefined;

  constructor(readonly span: Span) {
    this.parent = trace.setSpan(context.active(), span);
  }

  setRunId(runId: string): void {
    this.runId = runId;
    this.span.setAttribute('run.id', runId);
  }

  /** A child span of the run, tagged with the run id. */
  child(name: string, attributes: Attributes = {}): Span {
    return tracer().startSpan(
      name,
      { attributes: { ...(this.runId ? { 'run.id': this.runId } : {}), ...attributes } },
      this.parent,
    );
  }

  /** Span hook for one tool execution; call the result when it ends. */
  tool(name: string, toolCallId: string, attributes: Attributes = {}): (error?: string) => void {
    const s = this.child('in_app_agent.tool', { 'tool.name': name, 'tool.call_id': toolCallId, ...attributes });
    return (error) => endSpan(s, error ? { message: error } : undefined);
  }
}

/**
 * One `in_app_agent.model` span per model call (agent step). A step is the model's response
 * followed by the execution of the tools it called; the span covers the response only: it ends
 * when the first tool of the step starts, or at the step's end when no tool ran.
 */
export class ModelCallSpans {
  private open: { span: Span; doneAt?: number } | undefined;
  private step = 0;

  constructor(
    private readonly run: RunTrace | undefined,
    private readonly attributes: Attributes,
  ) {}

  stepStart(): void {
    if (!this.run) return;
    this.end();
    this.open = { span: this.run.child('in_app_agent.model', { ...this.attributes, 'gen_ai.step': this.step++ }) };
  }

  /** The model's response of the current step is complete (a tool of the step starts). */
  responseDone(): void {
    if (this.open && this.open.doneAt === undefined) this.open.doneAt = Date.now();
  }

  stepFinish(usage?: { inputTokens?: number; outputTokens?: number }): void {
    if (!this.open) return;
    if (usage) {
      this.open.span.setAttributes({
        'gen_ai.usage.input_tokens': usage.inputTokens ?? 0,
        'gen_ai.usage.output_tokens': usage.outputTokens ?? 0,
      });
    }
    this.end();
  }

  /** Ends the open span (the run stopped mid-step: error, abort, timeout). */
  end(error?: { code?: string; message: string }): void {
    const open = this.open;
    if (!open) return;
    this.open = undefined;
    if (error) {
      open.span.setStatus({ code: SpanStatusCode.ERROR, message: error.message });
      if (error.code) open.span.setAttribute('error.code', error.code);
    } else open.span.setStatus({ code: SpanStatusCode.OK });
    open.span.end(open.doneAt);
  }
}
