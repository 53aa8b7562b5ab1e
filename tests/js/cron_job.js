// A scheduled job monitored by @sentry/node's Sentry.withMonitor, run once per call by
// tests/extensions/crons/test_crons_node.py. Usage: `node cron_job.js <DSN> ok|fail`.
// The SDK sends an in_progress check-in with the monitor's configuration, then ok or
// error with the duration; this flushes and exits 0 (1 if the flush did not finish
// within a minute).
'use strict';

const Sentry = require('@sentry/node');

async function main() {
  const [dsn, outcome] = process.argv.slice(2);
  Sentry.init({ dsn, environment: 'production', release: 'jobs-node@1.0',
                defaultIntegrations: false });
  try {
    await Sentry.withMonitor('node-report', async () => {
      await new Promise((resolve) => setTimeout(resolve, 200));
      if (outcome === 'fail') {
        throw new Error('the report failed');
      }
    }, {
      schedule: { type: 'crontab', value: '*/5 * * * *' },
      checkinMargin: 2, maxRuntime: 10, timezone: 'Europe/Riga',
      failureIssueThreshold: 2, recoveryThreshold: 1,
    });
  } catch (err) {
    // the failure is the monitor's to report
  }
  // Up to a minute: on a loaded test machine the collector may take seconds to answer,
  // and an exit before it did would lose the check-ins.
  if (!(await Sentry.flush(60000))) {
    console.error('the check-ins were not delivered within 60 s');
    process.exit(1);
  }
  process.exit(0);
}

main();
