"""Scrubbing: secrets and personal data taken out of every record of every signal
before anything is stored or forwarded.

Runs first in the pipeline (before `classify`, the exception stages and `grouping`),
so that every later stage sees scrubbed records: an error made from a span event or
a log record is made of scrubbed values, and a fingerprint is computed on scrubbed
text (a message that differed only by a card number is one group). It runs where the
other stages run, on the event loop or in a decode worker, so a large request is
scrubbed off the event loop.

What a project's policy (model/policy.py, carried on the batch) says:
- the default rules, on unless `defaults: false`: a value under a key that names a
  secret (model/secretnames.py, the one rule), a credit-card number (13 to 19 digits,
  spaces or dashes allowed, Luhn-checked), the credentials of `Bearer` and `Basic`
  (in an Authorization header or anywhere in a value) and the value of a secret's name
  given as `name=value` or `name: value` inside text (`?sentry_key=…`,
  `password=…` in a log line) are masked;
- optional rules: e-mail addresses, IP addresses (v4 and v6; and a Sentry event's
  `user.ip_address`), masked;
- custom rules: keys (a name or a dotted path, globs) or a regular expression over
  values, each masked (MASK), hashed (HMAC-SHA-256 with the database's key: stable,
  so a hashed user id still groups and finds its events) or removed.

Where: span attributes, span event attributes, resource attributes, log attributes
and bodies, metric point and exemplar attributes, and of an error its message, its
exceptions' values, params, tags, context (user, request, contexts, breadcrumbs,
extra...) and user id. Not: span and log names, ids, times, stack frames (file,
function and source lines), metric names and values.

Cheap for the records with nothing to scrub, which are nearly all: the rules are
compiled once per policy (cached), a key's decision is cached, and a span or log
record that arrived as protobuf is checked in its message, without reading its
attributes out: a span is read (and then stored re-encoded) only when something in
it is to be scrubbed.

The package, by mechanism: `rules` (the patterns and what a value becomes), `hints`
(the quick tests on bytes), `scrubber` (the settings compiled, every decision and
change), `unread` (which records still in their protobuf message may hold anything),
`records` (each kind of record); the stage itself here.
"""

from __future__ import annotations

from model.component import Processor
from model.policy import DEFAULT, Policy
from model.records import Batch
from processors.scrub.hints import HINT_WORDS
from processors.scrub.records import (
    scrub_error,
    scrub_feedback,
    scrub_log,
    scrub_point,
    scrub_resource,
    scrub_span,
)
from processors.scrub.rules import HASH_PREFIX, MASK, luhn
from processors.scrub.scrubber import Scrubber
from processors.scrub.unread import suspect_spans, suspects, unread

__all__ = ["HASH_PREFIX", "HINT_WORDS", "MASK", "ScrubProcessor", "Scrubber", "luhn",
           "scrub_batch"]


def scrub_batch(batch: Batch, policy: Policy) -> None:
    scrubber = Scrubber.for_policy(policy.scrub, policy.hash_key)
    seen: set[int] = set()
    if batch.spans:
        hit, found = suspect_spans(scrubber, unread(batch.spans))
        for span in batch.spans:
            scrub_resource(scrubber, span.resource_attributes, seen)
            scrub_span(scrubber, span, id(span) in hit, found)
    if batch.logs:
        hit, found = suspects(scrubber, unread(batch.logs))
        for record in batch.logs:
            scrub_resource(scrubber, record.resource_attributes, seen)
            scrub_log(scrubber, record, id(record) in hit, found)
    for point in batch.metrics:
        scrub_resource(scrubber, point.resource_attributes, seen)
        scrub_point(scrubber, point)
    for error in batch.errors:
        scrub_error(scrubber, error)
    for said in batch.feedback:
        scrub_feedback(scrubber, said)


class ScrubProcessor(Processor):
    """The stage (see the module). A batch that carries no policy (one built outside a
    service, in a test) gets the default one."""

    default_config: dict[str, object] = {}  # the policy: section configures scrubbing

    def process(self, batch: Batch) -> Batch:
        scrub_batch(batch, batch.policy or DEFAULT)
        return batch
