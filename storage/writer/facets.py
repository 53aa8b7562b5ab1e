"""Facets of error groups: per group, how many of its stored errors had each
environment, release, service, level, tag value and user id, with when each was first and
last seen (`error_group_facets`, storage/rows.py).

Counted from the errors the commit actually stored (storage/writer/commit.py hands over
the insert rows minus the copies storage/writer/occurrences.py dropped), in the
commit's transaction: a facet count is exactly a count of stored errors, on one
collector or several. Like the groups, one atomic upsert per touched row per
commit, in key order, so two PostgreSQL transactions cannot deadlock.

An error with none of these values (Sounding's own API without the optional fields)
costs one pass in C over the commit's rows and nothing else.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import chain
from operator import itemgetter
from typing import Any

import orjson

from storage import rows
from storage.rows import FACET_LENGTH, FIELD_FACETS, Row
from storage.writer.copy import upsert_rows

FACETS = rows.ERROR_GROUP_FACETS
FACET_KEY = rows.FACET_KEY.column_names
ERRORS = rows.ERROR_EVENTS
# Positions in the writer's insert row: (project_id, *wire row, received_us).
_LABELS = itemgetter(*(1 + ERRORS.position(name) for name in (*FIELD_FACETS, "tags",
                                                               "user_id")))
_FINGERPRINT_TS = itemgetter(1 + ERRORS.position("fingerprint"), 1 + ERRORS.position("ts_us"))
NUL, REPLACEMENT = "\x00", "\ufffd"
USER_FACET = rows.USER_FACET

FacetKey = tuple[int, str, str, str]  # (project id, fingerprint, facet, value)


def _cut(text: str) -> str:
    """What the facet table holds of a key or value: at most FACET_LENGTH characters,
    NUL as U+FFFD (a tag's JSON can carry an escaped NUL; PostgreSQL's text cannot)."""
    text = text[:FACET_LENGTH]
    return text.replace(NUL, REPLACEMENT) if NUL in text else text


def facets_of(values: tuple[Any, ...]) -> dict[str, str]:
    """An error's facets from its (environment, release, service, level, tags JSON,
    user id): each tag, then the fields over tags of the same name, the user id as
    `user` (USER_FACET: the error list counts a group's distinct users from it); empty
    values left out."""
    *fields, tags_json, user_id = values
    facets: dict[str, str] = {}
    if tags_json:
        try:
            tags = orjson.loads(tags_json)
        except ValueError:  # a processor's odd value: the error is stored, its tags not counted
            tags = None
        if isinstance(tags, dict):
            facets.update((_cut(k), _cut(v)) for k, v in tags.items()
                          if isinstance(k, str) and isinstance(v, str) and k and v)
    for name, value in zip(FIELD_FACETS, fields, strict=True):
        if isinstance(value, str) and value:
            facets[name] = _cut(value)
    if isinstance(user_id, str) and user_id:
        facets[USER_FACET] = _cut(user_id)
    return facets


def merge_facets(errors: Sequence[Row]) -> dict[FacetKey, list[int]]:
    """[count, first seen, last seen] per (project, fingerprint, facet, value) over the
    insert rows of the errors stored."""
    if not any(chain.from_iterable(map(_LABELS, errors))):
        return {}
    merged: dict[FacetKey, list[int]] = {}
    for row in errors:
        labels = _LABELS(row)
        if not any(labels):
            continue
        fingerprint, ts_us = _FINGERPRINT_TS(row)
        for facet, value in facets_of(labels).items():
            key = (row[0], fingerprint, facet, value)
            seen = merged.get(key)
            if seen is None:
                merged[key] = [1, ts_us, ts_us]
            else:
                seen[0] += 1
                seen[1] = min(seen[1], ts_us)
                seen[2] = max(seen[2], ts_us)
    return merged


def write_facets(cursor: Any, dialect: str, errors: Sequence[Row]) -> None:
    """Add the facets of `errors` (insert rows of the errors stored) to their groups."""
    merged = merge_facets(errors)
    if not merged:
        return
    least, greatest = ("LEAST", "GREATEST") if dialect == "postgresql" else ("min", "max")
    f = FACETS
    upsert_rows(cursor, dialect, f, (*FACET_KEY, "count", "first_seen_us", "last_seen_us"),
                ("int4", "text", "text", "text", "int8", "int8", "int8"),
                f"ON CONFLICT ({', '.join(FACET_KEY)}) DO UPDATE SET "
                f'count = "{f}".count + excluded.count, '
                f'first_seen_us = {least}("{f}".first_seen_us, excluded.first_seen_us), '
                f'last_seen_us = {greatest}("{f}".last_seen_us, excluded.last_seen_us)',
                [(*key, *agg) for key, agg in sorted(merged.items())])
