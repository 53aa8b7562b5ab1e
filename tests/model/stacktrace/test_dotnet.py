""".NET Exception.ToString(): inner exceptions, Windows paths, async frames."""

from __future__ import annotations

from model.stacktrace import parse
from model.stacktrace.model import CAUSE

TRACE = """System.InvalidOperationException: Checkout failed
 ---> System.ArgumentNullException: Value cannot be null. (Parameter 'cart')
   at Acme.Shop.Cart.Total(Cart cart) in C:\\src\\Acme.Shop\\Cart.cs:line 42
   at Acme.Shop.CheckoutService.<RunAsync>d__3.MoveNext() in C:\\src\\Acme.Shop\\Checkout.cs:line 17
   --- End of inner exception stack trace ---
   at Acme.Shop.CheckoutService.RunAsync() in C:\\src\\Acme.Shop\\Checkout.cs:line 20
--- End of stack trace from previous location ---
   at System.Runtime.CompilerServices.TaskAwaiter.ThrowForNonSuccess(Task task)
   at Acme.Shop.Program.Main(String[] args) in /app/Program.cs:line 9
"""


def test_the_inner_exception_is_the_root_cause() -> None:
    trace = parse(TRACE)
    assert trace is not None and trace.language == "dotnet"
    inner, outer = trace.exceptions
    assert (inner.type, inner.value, inner.relation) == (
        "System.ArgumentNullException", "Value cannot be null. (Parameter 'cart')", CAUSE)
    assert (outer.type, outer.value, outer.relation) == (
        "System.InvalidOperationException", "Checkout failed", None)
    assert [(f.function, f.lineno) for f in inner.frames[::-1]] == [
        ("Total(Cart cart)", 42), ("MoveNext()", 17)]
    assert [(f.module, f.path, f.lineno, f.in_app) for f in outer.frames[::-1]] == [
        ("Acme.Shop.CheckoutService", "C:\\src\\Acme.Shop\\Checkout.cs", 20, True),
        ("System.Runtime.CompilerServices.TaskAwaiter", "", None, False),
        ("Acme.Shop.Program", "/app/Program.cs", 9, True)]
