"""Runs the cases asked for, in order: the sanity check, CRC-32C (one child process per
path), then write and read for each record size, Arrow in and out, RocksDB's dialect
(recycled and compressed WALs), then peak memory."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

from bench.cases.arrow import arrow_long_read_case, arrow_read_case, arrow_write_case
from bench.cases.arrow_file import arrow_file_cases
from bench.cases.crc import crc_cases
from bench.cases.dask import dask_scaling
from bench.cases.datastore import datastore_case
from bench.cases.dialects import compressed_case, recycled_case
from bench.cases.durable import durable_rates
from bench.cases.memory import peak_memory
from bench.cases.ray import ray_read
from bench.cases.read import read_case
from bench.cases.sanity import sanity
from bench.cases.spark_read import spark_read
from bench.cases.spark_stream import spark_stream_latency
from bench.cases.spark_write import spark_write
from bench.cases.write import write_case
from bench.data import RECORD_SIZES, Data
from bench.harness import Case, Config, measure

SECTIONS = ("crc", "write", "read", "arrow", "rocksdb", "datastore", "memory")
#: Sections run only when --only names them (they take minutes, and their own processes).
OPT_IN = ("dask", "durable", "ray", "spark_stream", "spark_write", "spark_read")
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


def run_opt_in(cfg: Config, only: set[str], quick: bool, progress: bool) -> dict[str, Any]:
    """The opt-in sections --only names: {"dask": its row (None without distributed),
    "durable": its rates, "ray": its rows (None without ray), "spark_stream": its
    latencies (None without pyspark)}."""
    rows: dict[str, Any] = {}
    if "durable" in only:
        # Beside the repository (a disk), not in /tmp, which may be a RAM file system.
        tmp = Path(tempfile.mkdtemp(prefix="llog-bench-durable-", dir=Path.cwd()))
        try:
            rows["durable"] = durable_rates(cfg, tmp, quick, progress)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    if "dask" in only:
        tmp = Path(
            tempfile.mkdtemp(prefix="llog-bench-", dir="/tmp" if os.path.isdir("/tmp") else None)
        )
        try:
            rows["dask"] = dask_scaling(cfg, tmp, quick, progress)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    if "ray" in only:
        tmp = Path(tempfile.mkdtemp(prefix="llog-bench-ray-", dir="/tmp"))
        try:
            rows["ray"] = ray_read(cfg, tmp, quick, progress)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    if "spark_stream" in only:
        tmp = Path(tempfile.mkdtemp(prefix="llog-bench-stream-", dir=Path.cwd()))  # a disk
        try:
            rows["spark_stream"] = spark_stream_latency(cfg, tmp, quick, progress)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    if "spark_read" in only:
        tmp = Path(tempfile.mkdtemp(prefix="llog-bench-spark-read-", dir="/tmp"))
        try:
            rows["spark_read"] = spark_read(cfg, tmp, quick, progress)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    if "spark_write" in only:
        tmp = Path(tempfile.mkdtemp(prefix="llog-bench-spark-write-", dir="/tmp"))
        try:
            rows["spark_write"] = spark_write(cfg, tmp, quick, progress)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
    return rows
