"""A handler's query arguments: each read and checked, a bad one refused with a 400
naming it (an id no 64-bit key can hold, a 404), and links to the same page with some
of them changed."""

from __future__ import annotations

from urllib.parse import urlencode

from tornado.web import HTTPError, RequestHandler

INT64_MAX = 2**63 - 1


class QueryArgsHandler(RequestHandler):
    def arg(self, name: str) -> str | None:
        """A query argument, None when absent or blank."""
        value = self.get_argument(name, None)
        return value.strip() if value and value.strip() else None

    def int_arg(self, name: str, default: int | None = None, minimum: int = 0,
                maximum: int = 1_000_000_000) -> int | None:
        raw = self.arg(name)
        if raw is None:
            return default
        try:
            value = int(raw)
        except ValueError as exc:
            raise HTTPError(400, f"'{name}' must be an integer") from exc
        if not minimum <= value <= maximum:
            raise HTTPError(400, f"'{name}' must be between {minimum} and {maximum}")
        return value

    def row_id(self, raw: str, what: str) -> int:
        """An id from the URL path (digits only, by the route): one that no 64-bit key
        can hold names nothing, so it is a 404 rather than an overflow in the driver."""
        digits = raw.lstrip("0") or "0"  # int() of a huge string is slow, and capped
        value = int(digits) if len(digits) <= 19 else INT64_MAX + 1
        if value > INT64_MAX:
            raise HTTPError(404, f"no {what} {raw}")
        return value

    def id_arg(self, name: str, what: str) -> int | None:
        """An optional id in the query: malformed is a 400, beyond 64 bits a 404."""
        raw = self.arg(name)
        if raw is None:
            return None
        if not raw.isascii() or not raw.isdigit():
            raise HTTPError(400, f"'{name}' must be a positive integer (an id)")
        return self.row_id(raw, what)

    def float_arg(self, name: str) -> float | None:
        raw = self.arg(name)
        if raw is None:
            return None
        try:
            value = float(raw)
        except ValueError as exc:
            raise HTTPError(400, f"'{name}' must be a number") from exc
        if not 0 <= value < 1e12:
            raise HTTPError(400, f"'{name}' must be a positive number")
        return value

    def kept_args(self, drop: tuple[str, ...] = ()) -> list[tuple[str, str]]:
        """This request's query arguments (last value of each), less `drop`."""
        return [(k, self.get_argument(k)) for k in self.request.query_arguments
                if k not in drop]

    def here(self, changes: dict[str, str | None]) -> str:
        """This page's URL with some query arguments changed (None removes one)."""
        args = dict(self.kept_args())
        for key, value in changes.items():
            if value is None:
                args.pop(key, None)
            else:
                args[key] = value
        return self.request.path + ("?" + urlencode(args) if args else "")
