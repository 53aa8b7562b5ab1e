"""A plugin processor package, installed by `make test` like any third-party plugin."""

from __future__ import annotations

import time

from model.component import Processor
from model.records import Batch


class RedactProcessor(Processor):
    """Replaces the values of configured keys in error params and span attributes."""

    def __init__(self, name: str, config: dict | None = None) -> None:
        super().__init__(name, config)
        self.keys = set(self.config.get("keys", ["password"]))
        self.replacement = str(self.config.get("replacement", "[redacted]"))
        self.started = False

    async def start(self) -> None:
        self.started = True

    def process(self, batch: Batch) -> Batch:
        for error in batch.errors:
            if error.params:
                error.params = {k: (self.replacement if k in self.keys else v)
                                for k, v in error.params.items()}
        for span in batch.spans:
            for key in self.keys & span.attributes.keys():
                span.attributes[key] = self.replacement
        return batch


class ExplodeProcessor(Processor):
    """Fails every batch holding an error whose fingerprint starts with `boom`, or a
    span named `boom` (raises), `boom-recursion` (recurses without end), `boom-memory`
    (allocates a terabyte) or `boom-slow` (takes 3 s): server-side failures, to test
    how ingest answers them."""

    def process(self, batch: Batch) -> Batch:
        if any(e.fingerprint.startswith("boom") for e in batch.errors):
            raise RuntimeError("the explode processor failed on purpose")
        for span in batch.spans:
            if span.name == "boom":
                raise RuntimeError("the explode processor failed on purpose")
            if span.name == "boom-recursion":
                _recurse()
            if span.name == "boom-memory":
                span.name = bytes(1 << 40).decode()
            if span.name == "boom-slow":
                time.sleep(3)
        return batch


def _recurse() -> int:
    return _recurse() + 1


class PoisonProcessor(Processor):
    """Puts into records what no store can hold, as a careless plugin could: an error
    whose fingerprint is `poison-<kind>` and a span named `poison-<kind>` get the
    value of that kind. To test that such a record is dropped alone."""

    ERROR_VALUES: dict[str, tuple[str, object]] = {
        "nan": ("params", {"x": float("nan")}),
        "surrogate": ("message", "lone \ud800"),
        "bigint": ("ts_us", 2**70),
        "type": ("exception_class", 42),
        "object": ("params", {"x": object()}),
    }

    def process(self, batch: Batch) -> Batch:
        for error in batch.errors:
            kind = error.fingerprint.removeprefix("poison-")
            if kind in self.ERROR_VALUES:
                name, value = self.ERROR_VALUES[kind]
                setattr(error, name, value)
        for span in batch.spans:
            if span.name == "poison-kind":
                span.kind = 2**40
            elif span.name == "poison-deep":
                value: object = "leaf"
                for _ in range(60):
                    value = {"k": value}
                span.attributes["deep"] = value
            elif span.name == "poison-surrogate":
                span.attributes["k\udc00"] = "v"
        return batch


class NotAProcessor:
    """Registered in the processors group by mistake: loading it must be a clear error."""
