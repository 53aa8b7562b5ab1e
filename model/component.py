"""Component contracts shared by receivers, processors, exporters and extensions.

Every component has `bind` (its listening ports, if any), `start` and `shutdown`;
`shutdown` is safe without `start` (after `bind` or not) and safe twice, so the
service can stop whatever it managed to bind or start. Factories
(runtime/factory.py) build components and hand them the `Host`, through which a
receiver finds the pipeline and the extensions it asks (authentication, health)
instead of reaching into the store.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping
from typing import Any, Protocol, TypeVar, runtime_checkable

from model.errors import RateLimited, RetryableError
from model.records import Batch
from model.sourcemap import SourceMaps


class Component(ABC):  # noqa: B024 - abstract only through its subclasses
    """Base of every pipeline stage. `config` is the stage's mapping from the YAML file."""

    def __init__(self, name: str, config: dict[str, Any] | None = None) -> None:
        self.name = name
        self.config: dict[str, Any] = dict(config or {})

    async def bind(self) -> None:  # noqa: B027 - optional hook, a no-op by default
        """Take the listening sockets, and nothing else. The service binds every
        component before it starts any, so that a busy port stops the collector before
        an extension creates anything (the first-run key and admin token, printed once,
        would otherwise be lost). `start` binds too when `bind` was not called;
        `shutdown` releases what `bind` took. Raises model.errors.PortUnavailable."""

    async def start(self) -> None:  # noqa: B027 - optional hook, a no-op by default
        """Acquire resources. Called once, downstream stages first."""

    async def shutdown(self) -> None:  # noqa: B027 - optional hook, a no-op by default
        """Release resources. Safe before `start` and safe twice."""

    async def health(self) -> tuple[bool, str]:
        """Whether this component works now, and why not; GET /health aggregates every
        component's (extensions/health.py). Must be cheap: health checks come
        often."""
        return True, ""


class Processor(Component):
    """A stage that transforms a batch in place or returns a new one.

    `process` runs for every request, on the event loop or, for large trace
    requests, in a decode worker process with its own instance (runtime/offload.py),
    so it must be quick, must not block on I/O and must not count on state kept
    between batches. Raising an exception fails the request with a 500.

    What a processor returns is checked value by value before it is stored
    (storage/wire/storable.py), as every record is, and a record the store could not
    hold is dropped alone.
    """

    @abstractmethod
    def process(self, batch: Batch) -> Batch: ...


# An exporter's preparation: a function a decode worker calls on the processed batch,
# and its settings (`Exporter.preparation`).
Preparation = tuple[Callable[[Batch, dict[str, Any]], Any], dict[str, Any]]


class Exporter(Component):
    """A stage that persists or sends a batch. `export` returns only once the batch
    is durable (or delivered): a receiver answers its client after it.

    Work that does not need the event loop (serialising a batch into the form the
    exporter ships, say) may be declared with `preparation`: large requests are then
    decoded, processed and prepared in a decode worker process
    (runtime/offload.py), and the event loop only hands the result on. What a
    preparation returns is the exporter's own business: the pipeline carries it
    without looking inside.
    """

    # Seconds a client is told to wait (Retry-After, gRPC RetryInfo) when this
    # exporter refuses a batch; set from the exporter's own configuration.
    retry_after: int = 1

    def preparation(self) -> Preparation | None:
        """(function, settings) that a decode worker calls as `function(batch,
        settings)` after the processors; it returns a picklable value, handed unopened
        to `export_prepared`. None (the default): the worker returns the processed
        batch and `export(batch)` is called. Asked once, when the pipeline is built.
        The function must be defined at a module's top level (it reaches the worker
        pickled by its qualified name, and the worker imports it so); `settings` must
        pickle and must not need `start`. The function must leave the batch as it
        found it: the next exporter gets it too."""
        return None

    @abstractmethod
    async def export(self, batch: Batch) -> None: ...

    async def export_prepared(self, prepared: Any) -> None:
        """Persist what this exporter's `preparation` made of a batch in a decode worker."""
        raise NotImplementedError(f"{type(self).__name__} declares no preparation")

    def admission_error(self) -> RetryableError | None:
        """Why a batch would be refused right now (overload, store down), or None.
        Receivers ask before decoding, so that shedding load costs next to nothing."""
        return None


class Receiver(Component):
    """A stage that accepts data from the network and feeds the pipeline.

    `shutdown` stops accepting and waits for the requests in flight, so that
    everything already acknowledged, or about to be, is handed on before the
    processors and exporters stop.
    """

    @abstractmethod
    def addresses(self) -> list[str]:
        """Where it listens, as URLs, once started."""


class Extension(Component):
    """A cross-cutting part that other components ask (the Collector's word): the
    store, authentication, health, the dashboard. Extensions start before every
    pipeline stage and stop after them."""

    def http_routes(self) -> list[Any]:
        """Tornado routes this extension serves on the ingest HTTP receiver's port
        (the dashboard, when it has no port of its own)."""
        return []


# Longer than any ingest key Sounding makes or anyone types: refused without hashing
# it, and refused when seeded (it could never be sent).
MAX_KEY_LENGTH = 512


@runtime_checkable
class Authenticator(Protocol):
    """What receivers ask to turn an ingest key into a project (extensions/
    auth.py). Raises Unauthenticated for an unknown key, StoreUnavailable when it
    cannot tell."""

    async def project_for_key(self, key: str) -> int: ...


@runtime_checkable
class Limiter(Protocol):
    """What the pipeline and the doors ask about a project's rate limits and quotas
    (extensions/limits.py, through the auth extension): `closed`, before a request's
    body is read, from memory (RateLimited when every category the door can carry is
    closed now); `take`, once its records are counted per category of
    model/limits.py (raises RateLimited naming the categories over); `release`, when a
request `closed` let in is done."""

    def closed(self, project_id: int, categories: tuple[str, ...]) -> RateLimited | None: ...

    async def take(self, project_id: int, counts: Mapping[str, int]) -> None: ...

    def release(self, project_id: int, categories: tuple[str, ...]) -> None:
        """A request `closed` let in is done (taken, refused, or failed)."""


@runtime_checkable
class PolicySource(Protocol):
    """What the pipeline asks for a project's policy (model/policy.py: scrubbing and
    inbound filters), on every request: an answer from memory, never a query
    (extensions/policy.py keeps them fresh)."""

    def policy_for(self, project_id: int) -> Any: ...


@runtime_checkable
class HealthCheck(Protocol):
    """What GET /health asks: whether every component is healthy, and the details
    the response carries besides `status` and `uptime_seconds`; and whether a request's
    bearer token opens GET /metrics and those details (`health.token`)."""

    async def check(self) -> tuple[bool, dict[str, Any]]: ...

    def authorized(self, token: str | None) -> bool: ...


E = TypeVar("E")


class Host(ABC):
    """What a factory's `create(name, config, host)` is given: the pipeline (for
    receivers) and the extensions, by type name."""

    @property
    @abstractmethod
    def pipeline(self) -> Any:
        """The runtime.pipeline.Pipeline receivers feed (typed loosely: this module
        sits below the pipeline)."""

    @abstractmethod
    def extension(self, type_name: str, contract: type[E]) -> E:
        """The extension of that type, checked against `contract`; ConfigError when
        there is none (not configured, or disabled) or it does not fulfil it."""

    @abstractmethod
    def components(self) -> list[Component]:
        """Every component built so far (health asks each)."""

    def http_routes(self) -> list[Any]:
        """Routes the extensions offer to the ingest HTTP receiver."""
        return []

    # The contracts receivers ask for, by the extension type that fulfils them
    # (mypy cannot take a Protocol as a type[...] argument, hence the ignores).

    def authenticator(self) -> Authenticator:
        return self.extension("auth", Authenticator)  # type: ignore[type-abstract]

    def health_check(self) -> HealthCheck:
        return self.extension("health", HealthCheck)  # type: ignore[type-abstract]

    def source_maps(self) -> SourceMaps:
        """The uploaded source maps, which the storage extension holds
        (extensions/sourcemaps.py); ConfigError where there is no store."""
        return self.extension("storage", SourceMaps)  # type: ignore[type-abstract]
    def limiter(self) -> Limiter:
        return self.extension("auth", Limiter)  # type: ignore[type-abstract]
