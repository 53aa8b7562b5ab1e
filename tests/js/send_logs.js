// A real OpenTelemetry JavaScript SDK application sending logs, run by
// tests/receiver/test_otlp_logs_clients.py. The OTLP/HTTP log exporter (JSON) is
// configured from the environment alone (OTEL_EXPORTER_OTLP_ENDPOINT,
// OTEL_EXPORTER_OTLP_HEADERS), as in a user's process. It emits a few records (one
// inside a span, one with a map body and an event name), exports them once, and
// prints one JSON object on stdout: the export result and the records as sent, in
// the shape storage/queries/logs.py reads them back (times as decimal strings,
// since they do not fit a JavaScript number).
'use strict';

const { context, trace } = require('@opentelemetry/api');
const { SeverityNumber } = require('@opentelemetry/api-logs');
const { resourceFromAttributes } = require('@opentelemetry/resources');
const { BasicTracerProvider } = require('@opentelemetry/sdk-trace-base');
const {
  InMemoryLogRecordExporter,
  LoggerProvider,
  SimpleLogRecordProcessor,
} = require('@opentelemetry/sdk-logs');
const { OTLPLogExporter } = require('@opentelemetry/exporter-logs-otlp-http');

function record(logger, tracer) {
  const span = tracer.startSpan('GET /cart');
  logger.emit({
    context: trace.setSpan(context.active(), span),
    severityNumber: SeverityNumber.INFO,
    severityText: 'INFO',
    body: 'cart 1234 viewed',
    attributes: { 'cart.id': 1234, 'a.float': 2.5, 'a.bool': true, 'a.strings': ['p', 'q'], 'a.string': 'naïve ✓' },
  });
  span.end();
  logger.emit({ severityNumber: SeverityNumber.ERROR, severityText: 'ERROR', body: 'payment refused' });
  logger.emit({
    severityNumber: SeverityNumber.WARN2,
    severityText: 'WARN2',
    eventName: 'cart.summary',
    body: { cart: { id: 1234, items: ['a', 'b'] }, total: 12.5, paid: false },
    attributes: { channel: 'web' },
  });
}

function ns(hrTime) {
  return (BigInt(hrTime[0]) * 1000000000n + BigInt(hrTime[1])).toString();
}

function describe(r) {
  const ctx = r.spanContext;
  return {
    time_ns: ns(r.hrTime),
    observed_ns: ns(r.hrTimeObserved),
    severity_number: r.severityNumber || 0,
    severity_text: r.severityText || '',
    body: r.body === undefined ? null : r.body,
    attributes: r.attributes,
    resource: r.resource.attributes,
    service_name: r.resource.attributes['service.name'],
    scope_name: r.instrumentationScope.name,
    trace_id: ctx ? ctx.traceId : '',
    span_id: ctx ? ctx.spanId : '',
    flags: ctx ? ctx.traceFlags : 0,
    event_name: r.eventName || '',
    dropped_attributes_count: r.droppedAttributesCount,
  };
}

async function main() {
  const memory = new InMemoryLogRecordExporter();
  const provider = new LoggerProvider({
    resource: resourceFromAttributes({ 'service.name': 'cart-logs', 'service.version': '3.0.1', 'host.cpus': 2 }),
    processors: [new SimpleLogRecordProcessor({ exporter: memory })],
  });
  const tracer = new BasicTracerProvider().getTracer('cart.ui');
  record(provider.getLogger('cart.ui', '0.9.0'), tracer);
  await provider.forceFlush();
  const records = memory.getFinishedLogRecords();
  const exporter = new OTLPLogExporter();
  const result = await new Promise((resolve) => exporter.export(records, resolve));
  await exporter.shutdown();
  await provider.shutdown();
  process.stdout.write(JSON.stringify({
    result: result.code === 0 ? 'SUCCESS' : `FAILURE: ${result.error}`,
    logs: records.map(describe),
  }) + '\n');
}

main().catch((err) => {
  process.stderr.write(`${err.stack || err}\n`);
  process.exit(1);
});
