"""A scheduled job monitored by the real Python sentry-sdk's `@monitor`, run once per
call by the tests as a subprocess (the SDK's global client stays out of the test
process). Usage: `SENTRY_DSN=... python cron_job.py ok|fail`. The SDK sends an
in_progress check-in with the monitor's configuration, then ok or error with the
duration, as it does for any job it wraps."""

from __future__ import annotations

import os
import sys
import time

import sentry_sdk
from sentry_sdk.crons import monitor

# Every minute, no grace: a skipped run is missed one minute after the last one's
# minute (the tests keep their wait short with it).
CONFIG = {"schedule": {"type": "interval", "value": 1, "unit": "minute"},
          "checkin_margin": 0, "max_runtime": 5, "timezone": "UTC",
          "failure_issue_threshold": 1, "recovery_threshold": 1}


@monitor(monitor_slug="nightly-report", monitor_config=CONFIG)  # type: ignore[arg-type]
def job(fail: bool) -> None:
    time.sleep(0.2)
    if fail:
        raise RuntimeError("the report failed")


def main() -> None:
    sentry_sdk.init(dsn=os.environ["SENTRY_DSN"], environment="production",
                    release="jobs@1.0", default_integrations=False)
    try:
        job(sys.argv[1] == "fail")
    except RuntimeError:
        pass
    # Up to a minute: on a loaded test machine the collector may take seconds to answer,
    # and an exit before it did would lose the check-ins.
    sentry_sdk.flush(timeout=60)


if __name__ == "__main__":
    main()
