"""The periodic alert evaluators: facts that no single write causes, found by
reading the store every evaluate_s (the extension calls `Evaluator.run_once`).

- deploy_worse: a deploy compared before/after by storage/queries/deploys.correlate
  (a deploy naming a service: over that service's requests only)
  is judged once, either
  * when its after-window is final: `deploy_window_s` long, or clipped by the next
    or previous deploy to its environment (then it cannot grow), counting only
    minutes at least SETTLE_S old so that late requests of the last minute are in;
    worse then records the fact, not worse records only the verdict; or
  * earlier, when the evidence is decisive: at least DECISIVE_S of whole minutes on
    each side, each with at least 2 x MIN_REQUESTS requests, and flagged worse.
  A deploy not worse yet is looked at again on the next evaluation until its window
  is final, for up to JUDGE_GRACE_S after that (collectors all down for longer miss
  the verdict rather than send a stale one). The verdict is an alert_state row (rule
  key "deploy_worse", subject the deploy id; storage/alerts/verdicts.py), written with
  the fact in one transaction, so a judged deploy costs one indexed read afterwards
  and is never judged twice; the fact's key "deploy_worse:<id>" makes it one fact
  even when two collectors judge it at once.
- frequency: a group with more than `count` events in the last `minutes` (a sliding
  window ending now), at most one fact per rule, group and period of `minutes`
  (aligned to the epoch: the period's start is in the key, so collectors agree). The
  events a fact already counted do not count again: after a fact in the previous
  period, the window starts at that fact's time. Ignored groups are skipped.
- error_rate / latency: per service, the error rate or p95 over the last `minutes`
  whole minutes of the performance rollups (storage/queries/performance.py); a fact
  when it goes over the threshold and one when it comes back to or under it, each
  with its alert_state change in one transaction (storage/alerts/state.py). A
  service is judged only with at least MIN_REQUESTS requests in the window; a firing
  one with no request at all recovers.
- crash_free_sessions / crash_free_users: per release (of the rule's environment, or
  of every one), the crash-free rate over the sessions started in the last `minutes`
  whole minutes (storage/queries/releases.py; users over the whole hours those
  touch): a fact when it falls below `threshold` and one when it is back at or above
  it, as for error_rate. A release is judged only with at least `min_sessions`
  sessions in the window; a firing one with no session at all recovers.

Every fact is deduplicated by its key, so any number of collectors may evaluate at
once. Everything blocking runs in a thread, never on the event loop.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any, Protocol
from urllib.parse import quote, urlencode

from storage.alerts import outbox, verdicts
from storage.alerts import state as alert_state
from storage.queries import alert_inputs, deploys, performance, projects, releases
from storage.store import Store

US = 1_000_000
MINUTE = 60
SETTLE_S = 60
DECISIVE_S = 5 * MINUTE
# Deploys older than their window plus this are not judged any more (collectors
# down for longer than this miss their verdict rather than send a stale one).
JUDGE_GRACE_S = 3600
DEPLOY_RULE_KEY = "deploy_worse"
MIN_REQUESTS = deploys.MIN_REQUESTS
# A frequency fact counts events up to this many (the message says how many).
COUNT_CAP = 10_000


class RuleLike(Protocol):
    """What the evaluators read of a rule (rules.Rule has these)."""

    @property
    def on(self) -> str: ...
    @property
    def project(self) -> str | None: ...
    @property
    def env(self) -> str | None: ...
    @property
    def service(self) -> str | None: ...
    @property
    def count(self) -> int | None: ...
    @property
    def minutes(self) -> int | None: ...
    @property
    def threshold(self) -> float | None: ...
    @property
    def p95_ms(self) -> float | None: ...
    @property
    def min_sessions(self) -> int | None: ...
    @property
    def rule_key(self) -> str: ...


CRASH_FREE = ("crash_free_sessions", "crash_free_users")


def dedupe_key(kind: str, *parts: str | int) -> str:
    """`kind:part:...` (storage shortens one too long for its column)."""
    return ":".join([kind, *map(str, parts)])


def _path(project: str, section: str, **query: str | None) -> str:
    args = {k: v for k, v in query.items() if v is not None}
    tail = "?" + urlencode(args) if args else ""
    return f"/projects/{quote(project, safe='')}/{section}{tail}"


def _stats(w: performance.WindowStats) -> dict[str, Any]:
    return {"start_s": w.start_s, "end_s": w.end_s, "count": w.count,
            "error_count": w.error_count, "error_rate": w.error_rate, "p95_ms": w.p95_ms}


class Evaluator:
    def __init__(self, store: Store, rules: Sequence[RuleLike],
                 deploy_window_s: int = 900) -> None:
        self.store = store
        self.rules = list(rules)
        self.deploy_window_s = deploy_window_s

    async def run_once(self, now_us: int) -> int:
        """Evaluate every rule once; the number of facts recorded."""
        return await asyncio.to_thread(self.evaluate, now_us)

    def evaluate(self, now_us: int) -> int:
        """Blocking: `run_once` in the calling thread."""
        if not self.rules:
            return 0
        names = {p.name: p.id for p in projects.list_projects(self.store)}
        recorded = 0
        on_deploys = [r for r in self.rules if r.on == "deploy_worse"]
        for name, project_id in names.items():
            mine = [r for r in on_deploys if r.project in (None, name)]
            if mine:
                envs = {r.env for r in mine}
                recorded += self._deploys(project_id, name, None in envs, envs, now_us)
        for rule in self.rules:
            targets = [(n, i) for n, i in names.items() if rule.project in (None, n)]
            for name, project_id in targets:
                if rule.on == "frequency" and rule.count is not None and rule.minutes:
                    recorded += self._frequency(rule, project_id, name, now_us)
                elif rule.on in ("error_rate", "latency") and rule.minutes:
                    recorded += self._threshold(rule, project_id, name, now_us)
                elif rule.on in CRASH_FREE and rule.minutes:
                    recorded += self._crash_free(rule, project_id, name, now_us)
        return recorded

    # deploy_worse

    def _deploys(self, project_id: int, name: str, any_env: bool, envs: set[str | None],
                 now_us: int) -> int:
        window_s = self.deploy_window_s
        since_us = now_us - (window_s + SETTLE_S + JUDGE_GRACE_S) * US
        found = [d for d in deploys.list_deploys(self.store, project_id, since_us,
                                                 now_us - DECISIVE_S * US)
                 if any_env or d.env in envs]
        if not found:
            return 0
        judged = verdicts.judged(self.store, project_id, DEPLOY_RULE_KEY,
                                       [str(d.id) for d in found])
        recorded = 0
        for deploy in found:
            if str(deploy.id) in judged:
                continue
            c = deploys.correlate(self.store, project_id, deploy, window_s,
                                  now_us - SETTLE_S * US)
            final = "now" not in c.clipped_by
            decisive = (c.after.end_s - c.after.start_s >= DECISIVE_S
                        and min(c.before.count, c.after.count) >= 2 * MIN_REQUESTS)
            if c.worse and (final or decisive):
                recorded += alert_state.set_state(
                    self.store, project_id, DEPLOY_RULE_KEY, str(deploy.id),
                    alert_state.FIRING, now_us, "deploy_worse",
                    dedupe_key("deploy_worse", deploy.id), self._deploy_details(c, name, final))
            elif final:
                verdicts.settle(self.store, project_id, DEPLOY_RULE_KEY, str(deploy.id),
                                      now_us)
        return recorded

    @staticmethod
    def _deploy_details(c: deploys.Correlation, name: str, final: bool) -> dict[str, Any]:
        d = c.deploy
        return {"deploy_id": d.id, "git_sha": d.git_sha, "version": d.version, "env": d.env,
                "environment": d.env, "release": d.version, "deployer": d.deployer,
                "service": d.service,
                "deployed_us": d.ts_us, "reasons": c.reasons, "scope": c.scope,
                "length_s": c.length_s, "window_filled": final,
                "before": _stats(c.before), "after": _stats(c.after),
                "new_groups": [g.fingerprint for g in c.new_groups],
                "path": _path(name, "deploys", env=d.env)}

    # frequency

    def _frequency(self, rule: RuleLike, project_id: int, name: str, now_us: int) -> int:
        assert rule.count is not None and rule.minutes
        more_than, period_s = rule.count, rule.minutes * MINUTE
        window_start = now_us - period_s * US
        busy = alert_inputs.busy_groups(self.store, project_id, window_start, more_than)
        if not busy:
            return 0
        period = now_us // US // period_s * period_s
        key = rule.rule_key

        def fact_key(fingerprint: str, start_s: int) -> str:
            return dedupe_key("frequency", key, fingerprint, start_s)

        seen = alert_inputs.fact_times(
            self.store, project_id,
            [fact_key(g.fingerprint, p) for g in busy for p in (period, period - period_s)])
        recorded = 0
        for group in busy:
            if fact_key(group.fingerprint, period) in seen:
                continue
            previous = seen.get(fact_key(group.fingerprint, period - period_s))
            start = window_start if previous is None else max(window_start, previous)
            count = alert_inputs.event_count(
                self.store, project_id, group.fingerprints or group.fingerprint, start,
                now_us + 1, rule.env,
                rule.service, at_most=max(more_than + 1, COUNT_CAP))
            if count <= more_than:
                continue
            details = {"rule_key": key, "fingerprint": group.fingerprint, "group_id": group.id,
                       "exception_class": group.exception_class, "message": group.message,
                       "count": count, "more_than": more_than, "minutes": rule.minutes,
                       "window_start_us": start, "period_start_s": period,
                       "first_seen_us": group.first_seen_us,
                       "last_seen_us": group.last_seen_us,
                       "environment": rule.env, "service": rule.service,
                       "path": _path(name, f"errors/{group.id}")}
            recorded += outbox.record_fact(self.store, project_id, "frequency",
                                           group.fingerprint, fact_key(group.fingerprint,
                                                                       period),
                                           now_us, details)
        return recorded

    # error_rate and latency

    def _threshold(self, rule: RuleLike, project_id: int, name: str, now_us: int) -> int:
        assert rule.minutes
        end_s = now_us // US // MINUTE * MINUTE  # whole minutes: this one is not over
        start_s = end_s - rule.minutes * MINUTE
        stats = performance.window_by_service(self.store, project_id, start_s, end_s,
                                              env=rule.env)
        if rule.service is not None:
            stats = {s: w for s, w in stats.items() if s == rule.service}
        firing = {subject for (pid, subject), state
                  in alert_state.states(self.store, rule.rule_key).items()
                  if pid == project_id and state == alert_state.FIRING}
        recorded = 0
        for service in sorted(set(stats) | firing):
            w = stats.get(service)
            if w is None or w.count == 0:
                over = False  # no request: nothing fails, nothing is slow
            elif w.count < MIN_REQUESTS:
                continue  # too few to judge either way
            else:
                over = self._over(rule, w)
            if over == (service in firing):
                continue
            recorded += alert_state.set_state(
                self.store, project_id, rule.rule_key, service,
                alert_state.FIRING if over else alert_state.OK, now_us, rule.on,
                dedupe_key(rule.on, rule.rule_key, service, now_us // US),
                self._threshold_details(rule, name, service, w, over))
        return recorded

    @staticmethod
    def _over(rule: RuleLike, w: performance.WindowStats) -> bool:
        if rule.on == "error_rate":
            return rule.threshold is not None and (w.error_rate or 0.0) > rule.threshold
        return rule.p95_ms is not None and w.p95_ms is not None and w.p95_ms > rule.p95_ms

    @staticmethod
    def _threshold_details(rule: RuleLike, name: str, service: str,
                           w: performance.WindowStats | None, over: bool) -> dict[str, Any]:
        value = None if w is None else (w.error_rate if rule.on == "error_rate" else w.p95_ms)
        threshold = rule.threshold if rule.on == "error_rate" else rule.p95_ms
        return {"rule_key": rule.rule_key, "service": service, "environment": rule.env,
                "state": "firing" if over else "recovered", "value": value,
                "threshold": threshold, "minutes": rule.minutes,
                "count": 0 if w is None else w.count,
                "error_count": 0 if w is None else w.error_count,
                "p95_ms": None if w is None else w.p95_ms,
                "path": _path(name, "performance", service=service or None, env=rule.env)}

    # crash_free_sessions and crash_free_users

    def _crash_free(self, rule: RuleLike, project_id: int, name: str, now_us: int) -> int:
        assert rule.minutes
        now_s = now_us // US
        end_s = now_s // MINUTE * MINUTE  # whole minutes: this one is not over
        start_s = end_s - rule.minutes * MINUTE
        found = {h.release: h for h in releases.health(
            self.store, project_id, start_s, end_s, now_s, environment=rule.env,
            by_environment=False)}
        firing = {subject for (pid, subject), state
                  in alert_state.states(self.store, rule.rule_key).items()
                  if pid == project_id and state == alert_state.FIRING}
        recorded = 0
        for release in sorted(set(found) | firing):
            h = found.get(release)
            value = None if h is None else (
                h.crash_free_sessions if rule.on == "crash_free_sessions"
                else h.crash_free_users)
            if h is None or h.sessions == 0:
                below = False  # no session: nothing crashes
            elif h.sessions < (rule.min_sessions or 1) or value is None:
                continue  # too few to judge either way
            else:
                below = rule.threshold is not None and value < rule.threshold
            if below == (release in firing):
                continue
            recorded += alert_state.set_state(
                self.store, project_id, rule.rule_key, release,
                alert_state.FIRING if below else alert_state.OK, now_us, rule.on,
                dedupe_key(rule.on, rule.rule_key, release, now_s),
                {"rule_key": rule.rule_key, "release": release, "environment": rule.env,
                 "state": "firing" if below else "recovered", "value": value,
                 "threshold": rule.threshold, "minutes": rule.minutes,
                 "min_sessions": rule.min_sessions,
                 "count": 0 if h is None else h.sessions,
                 "crashed": 0 if h is None else h.crashed,
                 "users": 0 if h is None else h.users,
                 "crashed_users": 0 if h is None else h.crashed_users,
                 "path": _path(name, "releases/" + quote(release, safe=""))})
        return recorded
