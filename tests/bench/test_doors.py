"""The --compare table of bench/doors.py: each side's best round (least CPU per
record), and the ratio of this tree's to REV's; the cores a collector and the load are
pinned to."""

from __future__ import annotations

import math
import os
from pathlib import Path

from bench.doors import DoorResult, best, compare_table, ratio


def _round(us: float, per_s: float = 1000.0) -> DoorResult:
    return DoorResult("errors_batch", "/ingest/errors/batch, 100 errors", "errors",
                      records_per_s=per_s, cpu_us_per_record=us)


def test_each_side_keeps_its_round_of_least_cpu_per_record() -> None:
    assert best([_round(90.0), _round(80.0, 2000.0), _round(85.0)]) == _round(80.0, 2000.0)
    assert best([_round(float("nan"), 0.0), _round(70.0)]) == _round(70.0)
    assert best([_round(float("nan"), 0.0)]) is None


def test_the_ratio_is_this_tree_over_rev() -> None:
    assert ratio(_round(60.0), _round(80.0)) == 0.75
    assert math.isnan(ratio(None, _round(80.0)))
    assert math.isnan(ratio(_round(60.0), None))


def test_the_table_row() -> None:
    table = compare_table("v0.13", {"errors_batch": (
        [_round(80.0, 4000.0), _round(84.0, 3900.0)],  # REV: A, A
        [_round(66.0, 4800.0), _round(60.0, 5000.0)])})  # this tree: B, B
    header, rule, row = table.strip().splitlines()
    assert "ratio (this/v0.13)" in header
    assert row == ("| /ingest/errors/batch, 100 errors | 80.0 | 60.0 | 0.750 | 4,000 | 5,000 "
                   "| 80.0, 84.0; 66.0, 60.0 |")


def test_a_side_without_a_measurement_has_no_ratio() -> None:
    failed = DoorResult("errors_batch", "/ingest/errors/batch, 100 errors", "errors",
                        failed="did not start")
    row = compare_table("v0.1", {"errors_batch": ([failed], [_round(60.0)])}).splitlines()[2]
    assert row == "| /ingest/errors/batch, 100 errors | – | 60.0 | – | – | 1,000 | –; 60.0 |"


def test_a_cpu_list_as_taskset_takes_it() -> None:
    from bench.__main__ import cpu_list

    assert cpu_list("0") == {0}
    assert cpu_list("1-3") == {1, 2, 3}
    assert cpu_list("0,2-3") == {0, 2, 3}


def test_a_pinned_collector_and_every_process_it_starts_run_on_its_cores(
        tmp_path: Path) -> None:
    from bench.server import BenchServer

    server = BenchServer(f"sqlite:///{tmp_path / 'b.db'}", {"SOUNDING_WORKERS": "2"}, cpus="0")
    try:
        pids = server.pids()
        assert len(pids) >= 4, server.log()  # the leader, its writer, two serve workers
        assert {pid: os.sched_getaffinity(pid) for pid in pids} == {pid: {0} for pid in pids}
    finally:
        assert server.stop() == 0, server.log()
        server.cleanup()
