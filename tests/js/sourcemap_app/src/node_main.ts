// The Node side of the fixture: @sentry/node reports the error of run() to the DSN
// given as the first argument, as release the second. Bundled by esbuild with
// @sentry/node left external (tests/support/jsbuild.py).
import * as Sentry from "@sentry/node";
import { run } from "./main";

Sentry.init({ dsn: process.argv[2], release: process.argv[3], defaultIntegrations: false });
try {
  run();
} catch (error) {
  Sentry.captureException(error);
}
Sentry.flush(10000).then((sent) => process.exit(sent ? 0 : 1));
