// A real @sentry/node HTTP server with release health on, run by
// tests/receiver/sentry/test_release_health_node.py.
// Usage: `node send_sessions.js <DSN>`.
// It serves FIXTURE's requests to itself through node:http (the SDK's http
// integration counts one session per request and sends them as a `sessions`
// aggregate): "ok" answers 200, "handled" captures an exception (an errored
// session), "crash" reports one unhandled (mechanism handled: false, as a framework's
// error handler does: a crashed session) and answers 500. Then it sends user
// feedback about the first crash with Sentry.captureFeedback, flushes and exits 0
// (1 if the flush did not finish). On stdout, one JSON object: the crash event ids
// and the feedback's id.
'use strict';

const http = require('node:http');
const Sentry = require('@sentry/node');

// Hand-counted in the test: 7 exited, 2 errored, 3 crashed.
const FIXTURE = [...Array(7).fill('ok'), 'handled', 'handled', 'crash', 'crash', 'crash'];

function get(port, path) {
  return new Promise((resolve, reject) => {
    http.get({ host: '127.0.0.1', port, path }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode));
    }).on('error', reject);
  });
}

async function main() {
  const dsn = process.argv[2] || process.env.SENTRY_DSN;
  Sentry.init({
    dsn,
    release: 'shop-node@2.0.0',
    environment: 'prod',
    // The http integration's request sessions only: no tracing, no other integration.
    defaultIntegrations: false,
    integrations: [Sentry.httpIntegration()],
  });
  const crashes = [];
  const server = http.createServer((req, res) => {
    const what = req.url.slice(1);
    if (what === 'handled') {
      Sentry.captureException(new RangeError('card declined'));
      res.statusCode = 402;
    } else if (what === 'crash') {
      crashes.push(Sentry.captureException(new TypeError('checkout crashed'),
        { mechanism: { type: 'http', handled: false } }));
      res.statusCode = 500;
    }
    res.end(what);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address();
  for (const what of FIXTURE) {
    await get(port, `/${what}`);
  }
  await new Promise((resolve) => server.close(resolve));
  const feedbackId = Sentry.captureFeedback({
    message: 'Checkout <b>crashed</b> twice <img src=x onerror=alert(1)>',
    name: 'Grace Hopper',
    email: 'grace@example.com',
    url: 'https://shop.example/checkout',
    associatedEventId: crashes[0],
  });
  const flushed = await Sentry.flush(10000);
  process.stdout.write(JSON.stringify({ crashes, feedback_id: feedbackId }) + '\n');
  process.exit(flushed ? 0 : 1);
}

main().catch((err) => {
  process.stderr.write(String(err && err.stack || err) + '\n');
  process.exit(2);
});
