"""Ruby's uncaught-exception report (3.3 backquotes, 3.4 quotes) and a logged
backtrace."""

from __future__ import annotations

from model.stacktrace import parse


def test_the_report_gives_type_message_and_frames() -> None:
    trace = parse("app/models/order.rb:12:in `total': undefined method `price' for "
                  "nil (NoMethodError)\n"
                  "\tfrom /usr/lib/ruby/gems/3.3.0/gems/activesupport-7.1/lib/x.rb:5:in "
                  "`each'\n\tfrom app/controllers/orders_controller.rb:8:in `block in show'\n"
                  "\tfrom bin/server:3:in `<main>'\n")
    assert trace is not None and trace.language == "ruby"
    (exception,) = trace.exceptions
    assert (exception.type, exception.value) == (
        "NoMethodError", "undefined method `price' for nil")
    assert [(f.function, f.lineno, f.in_app) for f in exception.frames[::-1]] == [
        ("total", 12, True), ("each", 5, False), ("block in show", 8, True),
        ("<main>", 3, True)]


def test_ruby_3_4_names_the_class_and_method() -> None:
    trace = parse("app.rb:4:in 'Order#total': boom (RuntimeError)\n"
                  "\tfrom app.rb:9:in '<main>'\n")
    assert trace is not None
    frame = trace.exceptions[0].frames[-1]
    assert (frame.module, frame.function, frame.lineno) == ("Order", "total", 4)


def test_windows_paths_and_a_logged_backtrace_without_from() -> None:
    trace = parse("C:/app/lib/order.rb:3:in `total'\nC:/Ruby32/lib/ruby/gems/3.2.0/gems/"
                  "rack-3.0/lib/rack.rb:9:in `call'\n")
    assert trace is not None
    assert [(f.path, f.lineno, f.in_app) for f in trace.exceptions[0].frames[::-1]] == [
        ("C:/app/lib/order.rb", 3, True),
        ("C:/Ruby32/lib/ruby/gems/3.2.0/gems/rack-3.0/lib/rack.rb", 9, False)]
