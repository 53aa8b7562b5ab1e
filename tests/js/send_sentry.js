// A real @sentry/node application, run by tests/receiver/sentry/test_sentry_node.py.
// Usage: `node send_sentry.js <DSN> [--stream]` (or SENTRY_DSN in the environment).
// @sentry/node 11 streams spans by default (`span` items, content type
// application/vnd.sentry.items.span.v2+json); without --stream this sends the classic
// `transaction` item (traceLifecycle "static"), with it the stream. It captures
// an exception thrown inside a named function, runs a transaction with one child
// span, flushes what it sent and exits 0; it exits 1 if the flush did not finish.
// It prints one JSON object on stdout: the event id and the trace id it sent, for the
// test to find them where they arrived.
'use strict';

const Sentry = require('@sentry/node');

// The span the root links to (a trace of its own, sampled).
const PREVIOUS = { traceId: '627a2885119dcc8184fae7eef09438cb', spanId: '6c71fc6b09b8b716',
  traceFlags: 1 };

function chargeCard(orderId) {
  throw new TypeError(`card declined for order ${orderId}`);
}

async function main() {
  const args = process.argv.slice(2);
  const stream = args.includes('--stream');
  const dsn = args.find((a) => a !== '--stream') || process.env.SENTRY_DSN;
  if (!dsn) {
    throw new Error('usage: node send_sentry.js <DSN> [--stream] (or SENTRY_DSN)');
  }
  Sentry.init({
    dsn,
    tracesSampleRate: 1,
    traceLifecycle: stream ? 'stream' : 'static',
    release: 'shop-node@4.5.6',
    environment: 'staging',
    // Only what the test sends: no instrumentation of the process's own I/O.
    defaultIntegrations: false,
  });
  Sentry.setTag('service', 'checkout-node');
  // Streamed spans carry no tags, only attributes: the scope's attribute names the
  // service there (receiver/sentry/span_stream.py).
  Sentry.setAttribute('service', 'checkout-node');

  let eventId;
  try {
    chargeCard(42);
  } catch (err) {
    eventId = Sentry.captureException(err);
  }

  let traceId;
  // Attributes of every type the span stream has, and a link to the trace before this
  // one, as a browser's page load links the previous one (sentry.link.type).
  await Sentry.startSpan({
    name: 'GET /orders/:id',
    op: 'http.server',
    attributes: { 'order.id': 42, 'order.total': 12.5, 'order.paid': true,
      'order.items': ['book', 'pen'], 'order.mixed': [1, 'one'] },
    links: [{ context: PREVIOUS, attributes: { 'sentry.link.type': 'previous_trace' } }],
  }, async (root) => {
    traceId = root.spanContext().traceId;
    await Sentry.startSpan({ name: 'SELECT * FROM orders WHERE id = $1', op: 'db.query' },
      async (child) => {
        child.setAttribute('db.system', 'postgresql');
      });
  });

  const flushed = await Sentry.flush(10000);
  process.stdout.write(JSON.stringify({ event_id: eventId, trace_id: traceId }) + '\n');
  process.exit(flushed ? 0 : 1);
}

main().catch((err) => {
  process.stderr.write(`${err.stack || err}\n`);
  process.exit(1);
});
