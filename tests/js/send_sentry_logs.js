// A real @sentry/node application that logs, run by
// tests/receiver/sentry/test_sentry_node_logs.py. Usage: `node send_sentry_logs.js <DSN>`.
// With `enableLogs: true` (@sentry/node 11's switch for logs), inside one span it
// writes a parameterised info log (`Sentry.logger.fmt`) and a plain warning, and counts
// a metric (`Sentry.metrics.count`); it flushes and prints one JSON object on stdout,
// the trace id, for the test to find the logs by. It exits 1 if the flush did not finish.
'use strict';

const Sentry = require('@sentry/node');

async function main() {
  const dsn = process.argv[2] || process.env.SENTRY_DSN;
  if (!dsn) {
    throw new Error('usage: node send_sentry_logs.js <DSN> (or SENTRY_DSN)');
  }
  Sentry.init({
    dsn,
    enableLogs: true,
    tracesSampleRate: 1,
    release: 'shop-node@4.5.6',
    environment: 'staging',
    defaultIntegrations: false,
  });
  let traceId;
  await Sentry.startSpan({ name: 'POST /orders', op: 'http.server' }, async (root) => {
    traceId = root.spanContext().traceId;
    Sentry.logger.info(Sentry.logger.fmt`order ${42} shipped`, { region: 'eu' });
    Sentry.logger.warn('stock low');
    Sentry.metrics.count('orders.shipped', 1);
  });
  const flushed = await Sentry.flush(10000);
  process.stdout.write(JSON.stringify({ trace_id: traceId }) + '\n');
  process.exit(flushed ? 0 : 1);
}

main().catch((err) => {
  process.stderr.write(String(err && err.stack) + '\n');
  process.exit(1);
});
