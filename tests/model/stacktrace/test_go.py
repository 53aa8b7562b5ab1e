"""Go panics: a goroutine dump, function line then `\\tfile.go:N +0xNN`."""

from __future__ import annotations

from model.stacktrace import parse

PANIC = """panic: runtime error: index out of range [5] with length 3

goroutine 7 [running]:
main.(*Cart).Item(...)
\t/home/dev/shop/cart.go:21
main.handler(0xc000012345, 0x3)
\t/home/dev/shop/main.go:12 +0x1d
net/http.HandlerFunc.ServeHTTP(0x0?, {0x6d6d20?, 0xc0000a2000?}, 0x0?)
\t/usr/local/go/src/net/http/server.go:2136 +0x29
github.com/go-chi/chi/v5.(*Mux).ServeHTTP(0xc0000b6000, {0x6d6d20, 0xc0000a2000}, 0xc000)
\t/root/go/pkg/mod/github.com/go-chi/chi/v5@v5.0.8/mux.go:87 +0x2ef
created by net/http.(*Server).Serve in goroutine 1
\t/usr/local/go/src/net/http/server.go:3086 +0x5cb

goroutine 1 [IO wait]:
main.main()
\t/home/dev/shop/main.go:30 +0x25
exit status 2
"""


def test_the_panicking_goroutine_innermost_last_after_reversal() -> None:
    trace = parse(PANIC)
    assert trace is not None and trace.language == "go"
    (panic,) = trace.exceptions
    assert (panic.type, panic.value) == (
        "panic", "runtime error: index out of range [5] with length 3")
    assert [(f.module, f.function, f.lineno, f.in_app) for f in panic.frames[::-1]] == [
        ("main", "(*Cart).Item", 21, True),
        ("main", "handler", 12, True),
        ("net/http", "HandlerFunc.ServeHTTP", 2136, False),
        ("github.com/go-chi/chi/v5", "(*Mux).ServeHTTP", 87, False),
        ("net/http", "(*Server).Serve", 3086, False)]
