"""receiver/otlp/json_rules.py: the OTLP/JSON rules the three decoders share."""

from __future__ import annotations

import pytest

from receiver.otlp.json_rules import Dropped, json_integer


@pytest.mark.parametrize(("value", "signed", "expected"), [
    (42, False, 42), (42.0, False, 42), ("42", False, 42), ("18446744073709551615", False,
                                                           2**64 - 1),
    ("-7", True, -7), (-7, False, -7),  # a JSON number keeps its sign; ranges are the caller's
    ("-7", False, None), (True, True, None), (False, False, None), (4.5, True, None),
    ("4.0", False, None), (" 4", False, None), ("1_000", False, None), ("٤", False, None),
    (None, False, None), ([1], False, None),
])
def test_json_integer_reads_the_forms_otlp_json_writes(value: object, signed: bool,
                                                       expected: int | None) -> None:
    assert json_integer(value, signed) == expected


def test_dropped_counts_every_record_and_keeps_the_first_reasons() -> None:
    dropped = Dropped()
    for n in range(25):
        dropped.drop(f"spans[{n}]", "bad id")
    assert dropped.dropped == 25
    assert dropped.reasons == [f"spans[{n}]: bad id" for n in range(20)]
