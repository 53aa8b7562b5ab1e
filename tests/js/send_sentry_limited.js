// A real @sentry/node application against a project over its error limit, run by
// tests/receiver/sentry/test_sentry_node_limits.py.
// Usage: `node send_sentry_limited.js <DSN> <errors>`.
// It captures `errors` exceptions one at a time (flushing after each, so that each is
// its own request), then runs one transaction, and prints one JSON object: the
// events the SDK itself dropped, by reason and category (its client's lost-event
// hook), so the test can tell what it held back from what the server refused.
'use strict';

const Sentry = require('@sentry/node');

async function main() {
  const [dsn, count] = process.argv.slice(2);
  const dropped = {};
  Sentry.init({
    dsn, tracesSampleRate: 1, traceLifecycle: 'static', defaultIntegrations: false,
    // The SDK's own Node transport, told to note each event it drops (its rate
    // limiter reports those through recordDroppedEvent) before the client counts it.
    transport: (options) => Sentry.makeNodeTransport({
      ...options,
      recordDroppedEvent: (reason, category, quantity) => {
        const key = `${reason}:${category}`;
        dropped[key] = (dropped[key] || 0) + (quantity || 1);
        return options.recordDroppedEvent(reason, category, quantity);
      },
    }),
  });
  for (let i = 0; i < Number(count); i += 1) {
    Sentry.captureException(new Error(`limited ${i}`));
    await Sentry.flush(5000);
  }
  await Sentry.startSpan({ name: 'GET /after', op: 'http.server' }, async () => {});
  const flushed = await Sentry.flush(10000);
  process.stdout.write(JSON.stringify({ dropped }) + '\n');
  process.exit(flushed ? 0 : 1);
}

main().catch((err) => {
  process.stderr.write(`${err.stack}\n`);
  process.exit(2);
});
