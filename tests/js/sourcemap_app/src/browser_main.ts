// The browser side of the fixture: @sentry/browser, pointed at the DSN in the page's
// query string, reports the error of run(); the page's title says when it was sent.
import * as Sentry from "@sentry/browser";
import { run } from "./main";

const params = new URLSearchParams(window.location.search);
Sentry.init({ dsn: params.get("dsn") ?? "", release: params.get("release") ?? undefined,
  defaultIntegrations: false });
try {
  run();
} catch (error) {
  Sentry.captureException(error);
}
Sentry.flush(10000).then((sent) => { document.title = sent ? "sent" : "not sent"; });
