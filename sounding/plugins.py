"""Building a processor or an exporter by name outside a service: what decode
workers (sounding/offload.py) and tests call. The registry itself is
sounding/factory.py; this module only gives it a detached host."""

from __future__ import annotations

from typing import Any, cast

from sounding.component import Exporter, Extension, Processor
from sounding.factory import GROUPS, DetachedHost, build

PROCESSOR_GROUP = GROUPS["processor"]
EXPORTER_GROUP = GROUPS["exporter"]


def build_processor(name: str, settings: Any) -> Processor:
    return cast(Processor, build("processor", name, settings, DetachedHost()))


def build_exporter(name: str, settings: Any, store: Any = None) -> Exporter:
    """An exporter whose host offers only a storage extension over `store`, if given."""
    extensions: dict[str, Extension] = {}
    if store is not None:
        from sounding.extensions.storage import StorageExtension

        extensions["storage"] = StorageExtension.over(store)
    return cast(Exporter, build("exporter", name, settings, DetachedHost(extensions)))
