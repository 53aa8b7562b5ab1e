"""The pipeline and the exporter contract (runtime/pipeline.py, model/component.py):
a decode worker runs the processors and then each exporter's declared preparation;
an exporter that declares none gets the processed batch, workers on or off; the
pipeline hands every item on unopened and knows no exporter's form."""

from __future__ import annotations

import asyncio
import os
import re
import subprocess
import sys
from typing import Any

import pytest

from model.component import Exporter, Preparation
from model.errors import InternalFailure, InvalidInput
from model.records import Batch
from processors.classify import ClassifyProcessor
from receiver.otlp.decode_traces import decode_traces_body
from runtime.offload import DecodePool
from runtime.pipeline import Pipeline, retry_after
from runtime.plugins import build_processor
from tests.exporters.senders import trace_request
from tests.receiver.otlp_helpers import random_trace_id, request_of, span_pb


def span_names(batch: Batch, settings: dict[str, Any]) -> tuple[str, list[str]]:
    """A preparation, run in a decode worker: what this test exporter ships."""
    if any(span.name == "fail-preparation" for span in batch.spans):
        raise ValueError("this preparation failed on purpose")
    return settings["tag"], [f"{span.name}/{span.category}" for span in batch.spans]


def faulty_decoder(body: bytes, protobuf: bool) -> Any:
    """A decoder with a bug: what it raises is its request's 500."""
    raise AttributeError("'bytes' object has no attribute 'resource_spans'")


class Recording(Exporter):
    """Declares no preparation: takes batches only."""

    def __init__(self, name: str, config: dict[str, Any] | None = None) -> None:
        super().__init__(name, config)
        self.batches: list[Batch] = []
        self.retry_after = int(self.config.get("retry_after_seconds", 1))

    async def export(self, batch: Batch) -> None:
        self.batches.append(batch)


class Preparing(Recording):
    """Declares a preparation; a batch decoded on the event loop still comes to `export`."""

    def __init__(self, name: str, config: dict[str, Any] | None = None) -> None:
        super().__init__(name, config)
        self.prepared: list[Any] = []

    def preparation(self) -> Preparation:
        return span_names, {"tag": self.name}

    async def export_prepared(self, prepared: Any) -> None:
        self.prepared.append(prepared)


def _pipeline(exporters: list[Exporter], workers: int = 1) -> Pipeline:
    pool = DecodePool([("classify", {})], [e.preparation() for e in exporters], workers,
                      min_bytes=0, max_bytes=1 << 24, build_processor=build_processor)
    return Pipeline([ClassifyProcessor("classify")], exporters, pool)


async def _offload(pipeline: Pipeline, body: bytes) -> None:
    pool = pipeline.decode_pool
    assert pool is not None and pool.wants(len(body))
    result = await pool.submit(decode_traces_body, (True,), Batch(7, approx_bytes=len(body)),
                               "spans", body)
    assert result.results is not None
    await pipeline.consume_prepared(result.results)


def test_a_worker_prepares_for_exporters_that_declare_it_and_hands_others_the_batch() -> None:
    recording, preparing = Recording("plain"), Preparing("named")

    async def run() -> None:
        pipeline = _pipeline([recording, preparing])
        await pipeline.start()
        try:
            await _offload(pipeline, trace_request(bytes.fromhex(random_trace_id()), spans=3))
        finally:
            await pipeline.shutdown()

    asyncio.run(run())
    (batch,) = recording.batches
    # Processed in the worker (classify ran there), then given to export() as a batch.
    assert (batch.project_id, len(batch.spans)) == (7, 3)
    assert {span.category for span in batch.spans} == {"database"}
    assert preparing.batches == []
    assert preparing.prepared == [("named", ["op-0/database", "op-1/database",
                                             "op-2/database"])]


def test_workers_stay_useful_when_no_exporter_declares_a_preparation() -> None:
    recording = Recording("plain")

    async def run() -> None:
        pipeline = _pipeline([recording])
        await pipeline.start()
        try:
            assert pipeline.decode_pool is not None and pipeline.decode_pool.wants(1)
            await _offload(pipeline, trace_request(bytes.fromhex(random_trace_id()), spans=2))
        finally:
            await pipeline.shutdown()

    asyncio.run(run())
    (batch,) = recording.batches
    assert [span.category for span in batch.spans] == ["database", "database"]


def test_inline_batches_go_to_export_whatever_an_exporter_declares() -> None:
    recording, preparing = Recording("plain"), Preparing("named")
    pipeline = Pipeline([ClassifyProcessor("classify")], [recording, preparing])
    batch = Batch(7)
    asyncio.run(pipeline.consume(batch))
    assert recording.batches == [batch] and preparing.batches == [batch]
    assert preparing.prepared == []


def test_what_a_request_makes_a_preparation_or_decoder_raise_is_its_own_answer() -> None:
    preparing = Preparing("named")
    failing = request_of(span_pb(random_trace_id(), "00f067aa0ba902b7",
                                 "fail-preparation")).SerializeToString()

    async def run() -> list[str]:
        pipeline = _pipeline([preparing])
        await pipeline.start()
        pool = pipeline.decode_pool
        assert pool is not None
        answers = []
        try:
            with pytest.raises(InternalFailure) as failed:
                await _offload(pipeline, failing)
            answers.append(str(failed.value))
            with pytest.raises(InvalidInput):
                await _offload(pipeline, b"\xff\xff not protobuf")
            with pytest.raises(InternalFailure) as failed:
                await pool.submit(faulty_decoder, (True,), Batch(7), "spans", b"")
            answers.append(str(failed.value))
            # The same worker goes on.
            await _offload(pipeline, trace_request(bytes.fromhex(random_trace_id()), spans=1))
        finally:
            await pipeline.shutdown()
        return answers

    answers = asyncio.run(run())
    assert answers[0].startswith(
        "preparation tests.runtime.test_pipeline.span_names: ValueError")
    assert "AttributeError" in answers[1]
    assert preparing.prepared == [("named", ["op-0/database"])]


@pytest.mark.parametrize(("function", "named"), [
    (lambda batch, settings: None, "test_pipeline.<lambda> is not defined at a module's top"),
    ("tests.runtime.test_pipeline:span_names", "'tests.runtime.test_pipeline:span_names' "
     "is not a function"),
])
def test_a_preparation_a_worker_could_not_import_stops_the_pool_at_start(
        function: Any, named: str) -> None:
    class Broken(Recording):
        def preparation(self) -> Preparation:
            return function, {}

    async def run() -> None:
        pipeline = _pipeline([Broken("broken")])
        try:
            await pipeline.start()
        finally:
            await pipeline.shutdown()

    with pytest.raises(RuntimeError, match=re.escape(named)):
        asyncio.run(run())


def test_the_retry_delay_is_the_longest_any_exporter_asks() -> None:
    assert retry_after([]) == 1
    assert retry_after([Recording("a", {"retry_after_seconds": 3}),
                        Recording("b", {"retry_after_seconds": 7})]) == 7


def test_the_pipeline_and_contracts_import_no_store_exporter_receiver_or_page() -> None:
    code = ("import sys, runtime.pipeline, model.component, runtime.offload; "
            "print(sorted({m.split('.')[0] for m in sys.modules} & "
            "{'storage', 'exporters', 'receiver', 'dashboard', 'sqlalchemy'}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=os.path.dirname(os.path.dirname(
                             os.path.dirname(os.path.abspath(__file__))))).stdout
    assert out.strip() == "[]"
