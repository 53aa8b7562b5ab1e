#!/usr/bin/env bash
# What the suite needs outside Python, installed or started when missing.
set -euo pipefail

# PostgreSQL: on CI its tests must run, so start the local server when it is down.
if command -v pg_isready >/dev/null 2>&1 && ! pg_isready -q -h 127.0.0.1 -p 5432; then
  if [ -d /etc/postgresql ] && command -v pg_ctlcluster >/dev/null 2>&1; then
    echo "starting the local PostgreSQL server"
    pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -n1)" main start || true
    for _ in $(seq 1 30); do pg_isready -q -h 127.0.0.1 -p 5432 && break; sleep 1; done
  fi
fi

# Chromium for the browser tests: Debian's package (Playwright's own browser download
# does not work on these machines).
if [ ! -x /usr/bin/chromium ]; then
  if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
    echo "installing Debian's chromium for the browser tests"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium
  else
    echo "warning: /usr/bin/chromium is missing and cannot be installed here" >&2
  fi
fi

# systemd-analyze for tests/deploy/test_systemd.py (Debian's systemd package; installing
# it in a container only adds the tools, it does not become the init system).
if ! command -v systemd-analyze >/dev/null 2>&1; then
  if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
    echo "installing Debian's systemd for systemd-analyze"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq systemd
  else
    echo "warning: systemd-analyze is missing and cannot be installed here" >&2
  fi
fi
