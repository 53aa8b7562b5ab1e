// A real OpenTelemetry JavaScript SDK application, run by
// tests/receiver/test_otlp_clients.py. The OTLP/HTTP exporter (JSON) is configured
// from the environment alone (OTEL_EXPORTER_OTLP_ENDPOINT, OTEL_EXPORTER_OTLP_HEADERS),
// as in a user's process. It records a small trace, exports it once, and prints one
// JSON object on stdout: the export result and the spans as sent, in the shape that
// tests/receiver/otlp_helpers.py reads back from the store (times as decimal strings,
// since they do not fit a JavaScript number).
'use strict';

const { SpanKind, SpanStatusCode, context, trace } = require('@opentelemetry/api');
const { resourceFromAttributes } = require('@opentelemetry/resources');
const {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} = require('@opentelemetry/sdk-trace-base');
const { OTLPTraceExporter } = require('@opentelemetry/exporter-trace-otlp-http');

function record(tracer) {
  const root = tracer.startSpan('GET /cart', {
    kind: SpanKind.SERVER,
    attributes: { 'http.request.method': 'GET', 'http.route': '/cart', 'http.response.status_code': 200 },
  });
  const inRoot = trace.setSpan(context.active(), root);
  const child = tracer.startSpan('fetch prices', {
    kind: SpanKind.CLIENT,
    attributes: {
      'a.string': 'naïve ✓', 'a.bool': false, 'a.int': 42, 'a.float': 2.5,
      'a.strings': ['p', 'q'], 'a.ints': [7, 8], 'a.bools': [true],
    },
  }, inRoot);
  try {
    throw new TypeError('price of item 1234 is undefined');
  } catch (err) {
    child.recordException(err);
    child.setStatus({ code: SpanStatusCode.ERROR, message: 'prices unavailable' });
  }
  child.end();
  for (const [name, kind] of [['cart publish', SpanKind.PRODUCER], ['cart consume', SpanKind.CONSUMER],
    ['render', SpanKind.INTERNAL]]) {
    tracer.startSpan(name, { kind }, inRoot).end();
  }
  root.setStatus({ code: SpanStatusCode.OK });
  root.end();
}

function ns(hrTime) {
  return (BigInt(hrTime[0]) * 1000000000n + BigInt(hrTime[1])).toString();
}

function describe(span) {
  const ctx = span.spanContext();
  return {
    trace_id: ctx.traceId,
    span_id: ctx.spanId,
    parent_span_id: span.parentSpanContext ? span.parentSpanContext.spanId : '',
    name: span.name,
    kind: span.kind + 1, // the SDK counts from INTERNAL = 0, OTLP from 1
    start_ns: ns(span.startTime),
    end_ns: ns(span.endTime),
    status_code: span.status.code,
    status_message: span.status.message || '',
    scope_name: span.instrumentationScope.name,
    resource: span.resource.attributes,
    attributes: span.attributes,
    events: span.events.map((e) => ({ name: e.name, attributes: e.attributes })),
  };
}

async function main() {
  const memory = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'cart-web', 'service.version': '3.0.1', 'host.cpus': 2 }),
    spanProcessors: [new SimpleSpanProcessor(memory)],
  });
  record(provider.getTracer('cart.ui', '0.9.0'));
  const spans = memory.getFinishedSpans();
  const exporter = new OTLPTraceExporter();
  const result = await new Promise((resolve) => exporter.export(spans, resolve));
  await exporter.shutdown();
  process.stdout.write(JSON.stringify({
    result: result.code === 0 ? 'SUCCESS' : `FAILURE: ${result.error}`,
    spans: spans.map(describe),
  }) + '\n');
}

main().catch((err) => {
  process.stderr.write(`${err.stack || err}\n`);
  process.exit(1);
});
