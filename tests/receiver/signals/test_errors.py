"""receiver/signals/errors.py: one error, or a batch answered item by item."""

from __future__ import annotations

from typing import Any

import pytest

from model.errors import InvalidInput
from receiver.signals.errors import handle_error, handle_error_batch
from receiver.signals.outcome import ACCEPTED, Origin
from tests.receiver.signals.collect import SPAN_ID, TRACE_ID, run


def error(**overrides: Any) -> dict[str, Any]:
    return {"exception_class": "KeyError", "message": "'a'", "backtrace": ["app.py:1"],
            "fingerprint": "f", **overrides}


def test_one_error_is_handed_on_with_its_origin() -> None:
    outcome, (batch,) = run(handle_error, error())
    assert outcome == ACCEPTED
    assert (batch.project_id, batch.approx_bytes) == (7, 123)
    (event,) = batch.errors
    assert (event.fingerprint, event.trace_id, event.span_id) == ("f", TRACE_ID, SPAN_ID)


def test_an_invalid_error_hands_nothing_on() -> None:
    with pytest.raises(InvalidInput) as caught:
        run(handle_error, error(fingerprint=None))
    assert caught.value.details == [{"field": "fingerprint", "error": "is required"}]


def test_a_batch_keeps_the_valid_items_and_names_the_others() -> None:
    outcome, (batch,) = run(handle_error_batch,
                            {"errors": [error(), error(message=3), error(fingerprint="g")]},
                            Origin(7, 10))
    assert outcome.batch is not None
    assert outcome.batch.as_json() == {
        "accepted": 2, "rejected": 1,
        "rejected_items": [{"index": 1, "details": [
            {"field": "errors[1].message", "error": "must be a string, got integer"}]}]}
    assert [e.fingerprint for e in batch.errors] == ["f", "g"]
    assert batch.errors[0].trace_id is None  # no traceparent


def test_a_batch_with_nothing_refused_still_answers_item_by_item() -> None:
    outcome, _ = run(handle_error_batch, {"errors": [error()]})
    assert outcome.batch is not None
    assert outcome.batch.as_json() == {"accepted": 1, "rejected": 0, "rejected_items": []}
