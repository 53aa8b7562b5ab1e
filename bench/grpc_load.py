"""The gRPC load generator: OTLP TraceService/Export with pre-serialised requests.

The stub is generic (no serialiser), so a request is the same bytes the HTTP
scenario posts; grpcio's asyncio client keeps several calls in flight on one
channel. Same two modes and the same result shape as bench/load.py.
"""

from __future__ import annotations

import asyncio
import time

import grpc

from bench import scenarios
from bench.load import WorkerResult, WorkerSpec


async def _run(spec: WorkerSpec, result: WorkerResult) -> None:
    scenario = scenarios.SCENARIOS[spec.scenario]
    bodies = scenario.body_source(spec.worker)
    prebuilt = [bodies(n) for n in range(spec.prebuild)]
    counter = [len(prebuilt)]

    def next_body() -> bytes:
        if prebuilt:
            return prebuilt.pop()
        counter[0] += 1
        return bodies(counter[0])

    metadata = (("authorization", f"Bearer {spec.key}"),)
    async with grpc.aio.insecure_channel(f"{spec.host}:{spec.port}", options=[
            ("grpc.max_send_message_length", 64 * 1024 * 1024)]) as channel:
        export = channel.unary_unary(scenario.path)
        begin = spec.start_at - spec.warmup
        end = spec.start_at + spec.duration
        await asyncio.sleep(max(0.0, begin - time.time()))

        async def call(due: float) -> None:
            result.sent += 1
            status = 202  # reported like the HTTP scenarios: 202 means committed
            try:
                await export(next_body(), metadata=metadata, timeout=60)
            except grpc.aio.AioRpcError as exc:
                status = 503 if exc.code() == grpc.StatusCode.UNAVAILABLE else 500
            now = time.time()
            result.statuses[status] = result.statuses.get(status, 0) + 1
            if status == 202:
                result.acked_requests += 1
                result.acked_records += scenario.records
                if spec.start_at <= now <= end:
                    result.window_acked_records += scenario.records
            if spec.start_at <= due <= end:
                result.latencies.append(now - due)

        if spec.rate:
            interval = 1.0 / spec.rate
            slots = asyncio.Semaphore(spec.connections)
            tasks = []
            due = begin
            while due < end:
                await asyncio.sleep(max(0.0, due - time.time()))
                await slots.acquire()

                async def one(at: float) -> None:
                    try:
                        await call(at)
                    finally:
                        slots.release()
                tasks.append(asyncio.create_task(one(due)))
                due += interval
            await asyncio.gather(*tasks)
        else:
            async def loop() -> None:
                while time.time() < end:
                    await call(time.time())
            await asyncio.gather(*(loop() for _ in range(spec.connections)))


def run_worker(spec: WorkerSpec) -> WorkerResult:
    result = WorkerResult()
    cpu0 = time.process_time()
    try:
        asyncio.run(_run(spec, result))
    except Exception as exc:  # noqa: BLE001 - reported with the results
        result.errors.append(f"{type(exc).__name__}: {exc}")
    result.cpu_seconds = time.process_time() - cpu0
    return result
