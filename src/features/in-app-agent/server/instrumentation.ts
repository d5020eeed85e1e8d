/**
 * OpenTelemetry spans for runs, model calls and tool calls. Spans are exported over OTLP/HTTP only
 * when OTEL_EXPORTER_OTLP_ENDPOINT is set (Langfuse's OTLP endpoint works); otherwise the API's
 * no-op tracer is used and nothing leaves the process.
 */
import { SpanStatusCode, trace, type Span, type Tracer } from '@opentelemetry/api';
import type { Env } from '@/server/env';

interface Holder {
  configured?: boolean;
  provider?: { forceFlush(): Promise<void>; shutdown(): Promise<void> };
}
const holder: Holder = ((globalThis as Record<string, unknown>).__inAppAgentOtel ??= {}) as Holder;

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
  const provider = new BasicTracerProvider({ spanProcessors: [new BatchSpanProcessor(exporter, { scheduledDelayMillis: 1000 })] });
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

export { trace };
