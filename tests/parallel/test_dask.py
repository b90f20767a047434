"""leveldb_log.dask on a real distributed.LocalCluster of two worker processes.

Many files, most of them damaged: whatever the blocksize, read_logs returns what one Reader
per file returns, record for record, and reports each corruption exactly once, with its file
and offset. to_logs writes one log per partition and reads back the same records.
"""

from __future__ import annotations

import io
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import leveldb_log
import pytest
from leveldb_log import BLOCK_SIZE, CorruptionError, Reader, Writer

pytest.importorskip("fsspec")
dask = pytest.importorskip("dask")
db = pytest.importorskip("dask.bag")
distributed = pytest.importorskip("distributed")
pytest.importorskip("pyarrow")
pytest.importorskip("dask.dataframe")
ld = pytest.importorskip("leveldb_log.dask")


def log_bytes(seed: int, n: int) -> bytes:
    """A log of n records of many sizes (every 97th spans blocks)."""
    out = io.BytesIO()
    with Writer(out) as w:
        w.write_many(
            b"%d:%d:" % (seed, i) * ((i * 31 + seed) % 40 + (3000 if i % 97 == 5 else 0))
            for i in range(n)
        )
        w.flush()
        return out.getvalue()


def damage(data: bytes, how: int) -> bytes:
    """Damage of several kinds: flipped bytes, a zeroed block, a torn tail, none."""
    d = bytearray(data)
    if how == 0:
        for at in (BLOCK_SIZE + 11, 3 * BLOCK_SIZE + 4000, 5 * BLOCK_SIZE - 3):
            d[at] ^= 0x10
    elif how == 1:
        d[2 * BLOCK_SIZE : 3 * BLOCK_SIZE] = bytes(BLOCK_SIZE)
    elif how == 2:
        del d[-1000:]
    elif how == 3:
        d[4 * BLOCK_SIZE + 100 : 4 * BLOCK_SIZE + 160] = b"\xff" * 60
    return bytes(d)


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Seven logs of 6 to 8 blocks, five of them damaged, and an empty one."""
    root = tmp_path_factory.mktemp("logs")
    for k in range(7):
        (root / f"log-{k}.log").write_bytes(damage(log_bytes(k, 600 + 20 * k), k % 5))
    (root / "log-7.log").write_bytes(b"")
    return root


def expected(root: Path) -> tuple[list[tuple[bytes, str]], list[Any]]:
    """One Reader per file, in sorted order: (record, path) pairs and FileCorruptions."""
    records: list[tuple[bytes, str]] = []
    found: list[Any] = []
    for path in sorted(root.glob("*.log")):
        name = path.as_posix()

        def keep(c: leveldb_log.Corruption, name: str = name) -> None:
            found.append(ld.FileCorruption(name, c.offset, c.size, c.reason))

        records += [(rec, name) for rec in Reader(path, on_corruption=keep)]
    return records, found


@pytest.fixture(scope="module")
def client() -> Iterator[Any]:
    """A LocalCluster of two single-threaded worker processes, and its client."""
    with (
        distributed.LocalCluster(
            n_workers=2,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
            # The scheduler's HTTP server runs without a dashboard too, on port 8787 unless
            # told: on a port the kernel hands it, two test processes never warn that it is
            # taken (a warning here is an error).
            scheduler_kwargs={"dashboard_address": ":0"},
            silence_logs=40,
        ) as cluster,
        distributed.Client(cluster) as c,
    ):
        yield c


@pytest.mark.parametrize("blocksize", [BLOCK_SIZE, 3 * BLOCK_SIZE + 1, 100_000, None])
def test_exactly_once_over_many_damaged_files(
    logs: Path, client: Any, blocksize: int | None
) -> None:
    want_records, want_found = expected(logs)
    assert len(want_found) >= 5  # the damage is there, and reported
    records, found = ld.read_logs(
        str(logs / "*.log"), blocksize=blocksize, include_path=True, corruptions=True
    )
    if blocksize == BLOCK_SIZE:
        assert records.npartitions > 40  # many files, many ranges each
    got_records, got_found = dask.compute(records, found)
    assert got_records == want_records
    # Each once: a single reader may report a fragment's damage after a later block's,
    # where ranges report by where the dropped bytes begin, so compare as multisets.
    assert sorted(got_found) == sorted(want_found)
    assert len(set(got_found)) == len(got_found)


def test_records_without_paths_and_a_list_of_files(logs: Path, client: Any) -> None:
    files = sorted(logs.glob("log-[2-4].log"))
    bag = ld.read_logs([str(p) for p in files], blocksize=2 * BLOCK_SIZE)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", leveldb_log.CorruptionWarning)
        want = [rec for p in files for rec in Reader(p)]
    assert bag.compute() == want
    assert bag.count().compute() == len(want)


def test_dataframe_matches_the_readers(logs: Path, client: Any) -> None:
    want_records, _ = expected(logs)
    frame = ld.read_logs_dataframe(str(logs / "*.log"), blocksize=2 * BLOCK_SIZE, max_records=500)
    assert [str(t) for t in frame.dtypes] == [
        "uint64[pyarrow]",
        "large_binary[pyarrow]",
        "string[pyarrow]",
    ]
    got = frame.compute()
    assert list(zip(got["data"], got["path"], strict=True)) == want_records
    offsets: list[int] = []
    for path in sorted(logs.glob("*.log")):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", leveldb_log.CorruptionWarning)
            reader = Reader(path)
            for _ in reader:
                assert reader.last_record_offset is not None
                offsets.append(reader.last_record_offset)
    assert list(got["offset"]) == offsets


def test_to_logs_round_trip(tmp_path: Path, client: Any) -> None:
    records = [b"record %d " % i * (i % 40) for i in range(5_000)]
    bag = db.from_sequence(records, npartitions=5)
    written = ld.to_logs(bag, str(tmp_path / "out" / "part-*.log"))
    assert written == [(tmp_path / "out" / f"part-{i}.log").as_posix() for i in range(5)]
    assert ld.read_logs(str(tmp_path / "out" / "*.log"), blocksize=BLOCK_SIZE).compute() == records
    for i, path in enumerate(written):  # each log is whole and perfect
        part = list(Reader(path, recovery="absolute"))
        assert part == records[i * 1000 : (i + 1) * 1000]


def test_to_logs_names_and_delays(tmp_path: Path, client: Any) -> None:
    bag = db.from_sequence([b"a", b"b", b"c"], npartitions=3)
    delayed = ld.to_logs(
        bag, str(tmp_path / "*.log"), name_function=lambda i: f"day-{i:03d}", compute=False
    )
    assert not list(tmp_path.glob("*.log"))
    written = dask.compute(*delayed)
    assert [Path(p).name for p in written] == ["day-000.log", "day-001.log", "day-002.log"]
    assert [list(Reader(p)) for p in written] == [[b"a"], [b"b"], [b"c"]]


def test_raising_modes_raise_from_compute(logs: Path, client: Any) -> None:
    bag = ld.read_logs(str(logs / "log-0.log"), blocksize=BLOCK_SIZE, recovery="absolute")
    with pytest.raises(CorruptionError):
        bag.compute()


def test_point_in_time_reads_every_file_whole_whatever_the_blocksize(
    logs: Path, client: Any
) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", leveldb_log.CorruptionWarning)
        want = [
            rec for p in sorted(logs.glob("*.log")) for rec in Reader(p, recovery="point_in_time")
        ]
    for blocksize in (None, BLOCK_SIZE):
        bag = ld.read_logs(str(logs / "*.log"), blocksize=blocksize, recovery="point_in_time")
        assert bag.npartitions == len([p for p in logs.glob("*.log") if p.stat().st_size])
        assert bag.compute() == want


def test_warnings_name_the_file_where_the_partition_is_read(logs: Path) -> None:
    bag = ld.read_logs(str(logs / "log-1.log"), blocksize=BLOCK_SIZE)
    with pytest.warns(leveldb_log.CorruptionWarning, match="log-1.log"):
        bag.compute(scheduler="sync")


def test_arguments_are_checked_before_anything_runs(logs: Path) -> None:
    with pytest.raises(FileNotFoundError):
        ld.read_logs(str(logs / "nothing-*.log"))
    with pytest.raises(ValueError, match="recovery"):
        ld.read_logs(str(logs / "*.log"), recovery="lenient")
    with pytest.raises(ValueError, match="blocksize"):
        ld.read_logs(str(logs / "*.log"), blocksize=0)
