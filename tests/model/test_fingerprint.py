"""Sounding's grouping rule (model/fingerprint.py): what the fingerprint of an
error sent without one is made of, and what it ignores."""

from __future__ import annotations

import pytest

from model.fingerprint import (
    fingerprint,
    frame_fingerprint,
    library_frame,
    normalise,
    top_frame,
)

PYTHON_TRACE = """Traceback (most recent call last):
  File "/srv/app/views.py", line 88, in checkout
    total = price(order)
  File "/srv/app/pricing.py", line 12, in price
    return table[order.sku]
KeyError: 'sku-1234'
"""
JAVA_TRACE = """java.lang.IllegalStateException: order 77 is closed
\tat com.shop.Orders.close(Orders.java:41)
\tat com.shop.Api.handle(Api.java:12)
"""
NODE_TRACE = """TypeError: Cannot read properties of undefined (reading 'id')
    at loadUser (/app/users.js:10:15)
    at main (/app/index.js:3:1)
"""
RUBY_TRACE = """/app/models/user.rb:27:in `find'
/app/controllers/users_controller.rb:5:in `show'
"""
GO_TRACE = """goroutine 1 [running]:
main.divide(...)
\t/src/main.go:8 +0x1d
main.main()
\t/src/main.go:13 +0x25
"""


@pytest.mark.parametrize(("text", "expected"), [
    ("user 42 not found", "user <n> not found"),
    ("took 1.25s", "took <n>s"),
    ("order 3f2a9c1e-0b7d-4e8a-9f00-1c2d3e4f5a6b missing", "order <id> missing"),
    ("object at 0x7f3a2b1c", "object at <hex>"),
    ("commit 9fceb02d0ae598e95dc970b74767f19372d61af8 bad", "commit <hex> bad"),
    ("deadbeefcafe has no digit and stays", "deadbeefcafe has no digit and stays"),
    ("  many   spaces\n and lines ", "many spaces and lines"),
])
def test_normalise(text: str, expected: str) -> None:
    assert normalise(text) == expected


@pytest.mark.parametrize(("trace", "frame"), [
    (PYTHON_TRACE, 'File "/srv/app/pricing.py", line 12, in price'),  # innermost is last
    (JAVA_TRACE, "at com.shop.Orders.close(Orders.java:41)"),
    (NODE_TRACE, "at loadUser (/app/users.js:10:15)"),
    (RUBY_TRACE, "/app/models/user.rb:27:in `find'"),
    (GO_TRACE, "/src/main.go:8 +0x1d"),
    ("no frames here\njust words", ""),
    ("", ""),
])
def test_top_frame(trace: str, frame: str) -> None:
    assert top_frame(trace) == frame


def test_fingerprint_ignores_numbers_ids_and_line_numbers() -> None:
    base = fingerprint("KeyError", PYTHON_TRACE, "'sku-1234'")
    assert fingerprint("KeyError", PYTHON_TRACE, "'sku-98'") == base
    moved = PYTHON_TRACE.replace("line 12", "line 19")  # a deploy moved the line
    assert fingerprint("KeyError", moved, "'sku-1234'") == base
    assert len(base) == 32 and int(base, 16) >= 0


def test_fingerprint_separates_type_frame_and_message() -> None:
    base = fingerprint("KeyError", PYTHON_TRACE, "'sku-1234'")
    assert fingerprint("IndexError", PYTHON_TRACE, "'sku-1234'") != base
    other_frame = PYTHON_TRACE.replace("in price", "in discount")
    assert fingerprint("KeyError", other_frame, "'sku-1234'") != base
    assert fingerprint("KeyError", PYTHON_TRACE, "'plan-1234'") != base
    # The parts cannot run into each other.
    assert fingerprint("a", "", "b c") != fingerprint("a b", "", "c")


def test_the_fingerprint_ignores_a_module_prefix_and_surrounding_quotes() -> None:
    # How the two Python SDK paths name one exception (span event, log record).
    assert fingerprint("shop.errors.PaymentDeclined", PYTHON_TRACE, "'card 4'") == \
        fingerprint("PaymentDeclined", PYTHON_TRACE, "card 4")
    assert fingerprint("a.PaymentDeclined", "", "x") != fingerprint("a.Declined", "", "x")
    assert fingerprint("KeyError", "", "'k") != fingerprint("KeyError", "", "k")


def test_a_known_top_frame_gives_the_fingerprint_of_the_trace_it_tops() -> None:
    # A Sentry event's frames are rendered as the line the trace would print.
    assert frame_fingerprint("KeyError", 'File "/srv/app/pricing.py", line 12, in price',
                             "'sku-1'") == fingerprint("KeyError", PYTHON_TRACE, "'sku-1'")
    assert frame_fingerprint("KeyError", "", "x") != frame_fingerprint("KeyError", "f:1", "x")


LIBRARY_PYTHON = """Traceback (most recent call last):
  File "/srv/shop/orders.py", line 12, in parse_order
    return json.loads(body)
  File "/usr/lib/python3.11/json/__init__.py", line 346, in loads
    return _default_decoder.decode(s)
  File "/usr/lib/python3.11/json/decoder.py", line 355, in raw_decode
    raise JSONDecodeError("Expecting value", s, err.value) from None
json.decoder.JSONDecodeError: Expecting value: line 1 column 1 (char 0)
"""
LIBRARY_NODE = """Error: connect ECONNREFUSED
    at TCPConnectWrap.afterConnect [as oncomplete] (node:net:1555:16)
    at Socket.emit (/app/node_modules/pg/lib/client.js:12:3)
    at fetchUser (/app/users.js:10:15)
"""


@pytest.mark.parametrize(("trace", "frame"), [
    # A Sentry SDK marks the library frames not in-app: the rule passes over them too.
    (LIBRARY_PYTHON, 'File "/srv/shop/orders.py", line 12, in parse_order'),
    (LIBRARY_NODE, "at fetchUser (/app/users.js:10:15)"),
    # Only library frames: the innermost of them.
    ('  File "/usr/lib/python3.11/json/decoder.py", line 355, in raw_decode\n',
     'File "/usr/lib/python3.11/json/decoder.py", line 355, in raw_decode'),
])
def test_the_top_frame_is_the_applications(trace: str, frame: str) -> None:
    assert top_frame(trace) == frame


@pytest.mark.parametrize(("line", "library"), [
    ('File "/app/.venv/lib/python3.11/site-packages/requests/api.py", line 1', True),
    ('File "/usr/lib/python3/dist-packages/yaml/x.py", line 1', True),
    ('File "<frozen importlib._bootstrap>", line 241', True),
    ('File "C:\\Python311\\Lib\\json\\decoder.py", line 3', True),
    ("at Module._compile (node:internal/modules/cjs/loader:1105:14)", True),
    ("at processTicksAndRejections (internal/process/task_queues.js:95:5)", True),
    ("/usr/local/bundle/gems/rack-2.2/lib/rack.rb:5:in `call'", True),
    ("/root/go/pkg/mod/github.com/lib/pq@v1.10.9/conn.go:12 +0x1d", True),
    ('File "/srv/app/views.py", line 2, in checkout', False),
    ("at loadUser (/app/users.js:10:15)", False),
    ("/app/models/user.rb:27:in `find'", False),
])
def test_library_frames_are_told_by_their_paths(line: str, library: bool) -> None:
    assert library_frame(line) is library
