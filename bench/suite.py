"""Runs the cases asked for, in order: the sanity check, CRC-32C (one child process per
path), then write and read for each record size, Arrow in and out, RocksDB's dialect
(recycled and compressed WALs), then peak memory."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any, NamedTuple

from bench.cases.arrow import arrow_long_read_case, arrow_read_case, arrow_write_case
from bench.cases.arrow_file import arrow_file_cases
from bench.cases.crc import crc_cases
from bench.cases.dask import dask_scaling, dask_table
from bench.cases.datastore import datastore_case
from bench.cases.dialects import compressed_case, recycled_case
from bench.cases.durable import durable_rates, durable_table
from bench.cases.memory import peak_memory
from bench.cases.ray import ray_read, ray_table
from bench.cases.read import read_case
from bench.cases.sanity import sanity
from bench.cases.spark_read import spark_read, spark_read_table
from bench.cases.spark_stream import spark_stream_latency, spark_stream_table
from bench.cases.spark_write import spark_write, spark_write_table
from bench.cases.write import write_case
from bench.data import RECORD_SIZES, Data
from bench.harness import Case, Config, measure

SECTIONS = ("crc", "write", "read", "arrow", "rocksdb", "datastore", "memory")
#: Sections run only when --only names them (they take minutes, and their own processes).
ORDER = {"crc32c": 0, "write": 1, "read": 2}


def _record_cases(data: Data, cfg: Config, only: set[str], progress: bool) -> list[Case]:
    """Write and read cases for each record size (the records of one size serve its four
    cases, then are let go)."""
    cases = []
    for size in RECORD_SIZES:
        for op, make in (("write", write_case), ("read", read_case)):
            if op not in only:
                continue
            for target in ("memory", "file"):
                case = make(size, target, data, cfg)
                measure(case, cfg, progress)
                cases.append(case)
                data.forget(keep_records=True)
        data.forget()
    return cases


def _extra_cases(makers: tuple[Any, ...], data: Data, cfg: Config, progress: bool) -> list[Case]:
    """Cases of one section each maker returns (None: not on this machine)."""
    cases = []
    for make in makers:
        case = make(data, cfg)
        if case is not None:
            measure(case, cfg, progress)
            cases.append(case)
        data.forget(keep_records=True)
    data.forget()
    return cases


def run_suite(
    cfg: Config, only: set[str], progress: bool
) -> tuple[list[Case], list[dict[str, Any]]]:
    """The measured cases (sorted: crc32c, write, read; by size) and the peak-memory rows."""
    tmp = Path(
        tempfile.mkdtemp(prefix="llog-bench-", dir="/tmp" if os.path.isdir("/tmp") else None)
    )
    data = Data(tmp)
    cases: list[Case] = []
    peaks: list[dict[str, Any]] = []
    try:
        sanity(data)
        if "crc" in only:
            cases += crc_cases(cfg, progress)
        cases += _record_cases(data, cfg, only, progress)
        if "arrow" in only:
            makers = (arrow_read_case, arrow_long_read_case, arrow_write_case)
            cases += _extra_cases(makers, data, cfg, progress)
            cases += arrow_file_cases(cfg, progress)
        if "rocksdb" in only:
            cases += _extra_cases((recycled_case, compressed_case), data, cfg, progress)
        if "datastore" in only:
            cases += _extra_cases((datastore_case,), data, cfg, progress)
        cases.sort(key=lambda c: (ORDER[c.op], c.size))  # stable: CRC paths keep their order
        if "memory" in only:
            peaks = peak_memory(data, cfg)
    finally:
        data.forget()
        shutil.rmtree(tmp, ignore_errors=True)
    return cases, peaks


class OptIn(NamedTuple):
    """An opt-in section: what measures it (given a folder of its own), what prints its
    table, and whether that folder must be on a disk beside the repository (durable writes
    and fsyncs) rather than in /tmp, which may be a RAM file system."""

    run: Callable[[Config, Path, bool, bool], Any]
    table: Callable[[Any, bool], str]
    on_disk: bool


#: The opt-in sections, in the order they run and print.
OPT_IN_SECTIONS = {
    "dask": OptIn(dask_scaling, dask_table, False),
    "durable": OptIn(durable_rates, durable_table, True),
    "ray": OptIn(ray_read, ray_table, False),
    "spark_stream": OptIn(spark_stream_latency, spark_stream_table, True),
    "spark_write": OptIn(spark_write, spark_write_table, False),
    "spark_read": OptIn(spark_read, spark_read_table, False),
}
OPT_IN = tuple(OPT_IN_SECTIONS)


def run_opt_in(cfg: Config, only: set[str], quick: bool, progress: bool) -> dict[str, Any]:
    """The opt-in sections --only names, each measured in a folder of its own: {name: its
    row (None where its engine or package is missing)}."""
    rows: dict[str, Any] = {}
    for name, section in OPT_IN_SECTIONS.items():
        if name not in only:
            continue
        where = Path.cwd() if section.on_disk else ("/tmp" if os.path.isdir("/tmp") else None)
        tmp = Path(tempfile.mkdtemp(prefix=f"llog-bench-{name}-", dir=where))
        try:
            rows[name] = section.run(cfg, tmp, quick, progress)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return rows
