"""leveldb_log.ray.read_logs on a real local Ray: ranges as read tasks, Arrow types, paths,
dialects, sizes, and every recovery mode on damaged logs with their reports."""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

import leveldb_log
import pytest
from leveldb_log import BLOCK_SIZE, Corruption, CorruptionError, CorruptionWarning, Reader

pytestmark = pytest.mark.slow

ray = pytest.importorskip("ray", reason="ray is not installed (pip install 'leveldb-log[ray]')")
pa = pytest.importorskip("pyarrow")

from leveldb_log.ray import read_logs  # noqa: E402


def write_log(path: Path, records: list[bytes], **options: Any) -> Path:
    with leveldb_log.Writer(path, **options) as w:
        w.write_many(records)
    return path


def payloads(tag: str, n: int, size: int = 300) -> list[bytes]:
    """n distinct records of about size bytes (a few cross block boundaries)."""
    return [(f"{tag}-{i}-".encode() * size)[: size + i % 97] for i in range(n)]


def reader_rows(path: Path, **options: Any) -> list[tuple[int, bytes]]:
    """(offset, record) as a Reader over the whole file gives them."""
    rows = []
    with Reader(path, **options) as r:
        for record in r:
            rows.append((r.last_record_offset, record))
    return rows


def rows_of(ds: Any) -> list[dict[str, Any]]:
    return ds.take_all()


def damaged_log(path: Path) -> tuple[Path, list[tuple[int, bytes]]]:
    """A log of 400 records with one payload byte flipped in its third block; and the
    rows a skipping Reader returns from it."""
    write_log(path, payloads("d", 400))
    data = bytearray(path.read_bytes())
    data[2 * BLOCK_SIZE + 1000] ^= 0x40
    path.write_bytes(bytes(data))
    return path, reader_rows(path, on_corruption=lambda c: None)


def test_every_record_once_with_its_offset_across_many_ranges(
    ray_local: Any, tmp_path: Path
) -> None:
    a = write_log(tmp_path / "a.log", payloads("a", 700))
    b = write_log(tmp_path / "b.log", payloads("b", 500, size=5000))
    ds = read_logs([str(a), str(b)], blocksize=BLOCK_SIZE, include_paths=True)
    got = sorted((r["path"], r["offset"], r["data"]) for r in rows_of(ds))
    want = sorted(
        [(str(a), o, d) for o, d in reader_rows(a)] + [(str(b), o, d) for o, d in reader_rows(b)]
    )
    assert got == want
    assert len(got) == 1200


def test_the_columns_keep_the_readers_arrow_types(ray_local: Any, tmp_path: Path) -> None:
    log = write_log(tmp_path / "x.log", [b"one", b"", b"three"])
    plain = read_logs(str(log)).schema().base_schema
    assert plain == pa.schema(
        [pa.field("offset", pa.uint64(), False), pa.field("data", pa.large_binary(), False)]
    )
    with_path = read_logs(str(log), include_paths=True)
    table = pa.concat_tables([ray.get(ref) for ref in with_path.to_arrow_refs()])
    assert table.schema.field("offset").type == pa.uint64()
    assert table.schema.field("data").type == pa.large_binary()
    assert table.schema.field("path").type == pa.string()
    assert table.column("data").to_pylist() == [b"one", b"", b"three"]
    assert table.column("path").to_pylist() == [str(log)] * 3


def test_one_read_task_per_range_with_its_bytes_and_no_row_count(tmp_path: Path) -> None:
    pytest.importorskip("ray.data")
    from leveldb_log import _ray_io, splits
    from leveldb_log._files._listing import ListOptions
    from leveldb_log._files._read import ReadSpec

    a = write_log(tmp_path / "a.log", payloads("a", 900))
    b = write_log(tmp_path / "b.log", payloads("b", 10))
    listing = ListOptions("ray")
    source = _ray_io.LogDatasource([str(tmp_path)], ReadSpec(), listing, 2 * BLOCK_SIZE)
    tasks = source.get_read_tasks(parallelism=1)
    ranges = [(str(a), s, e) for s, e in splits(a, size=2 * BLOCK_SIZE)] + [
        (str(b), s, e) for s, e in splits(b, size=2 * BLOCK_SIZE)
    ]
    assert len(tasks) == len(ranges) > 2
    assert [t.metadata.size_bytes for t in tasks] == [e - s for _, s, e in ranges]
    assert [t.metadata.input_files for t in tasks] == [(p,) for p, _, _ in ranges]
    assert all(t.metadata.num_rows is None for t in tasks)
    total = a.stat().st_size + b.stat().st_size
    assert source.estimate_inmemory_data_size() == total
    whole = _ray_io.LogDatasource([str(tmp_path)], ReadSpec(), listing, None)
    assert [t.metadata.size_bytes for t in whole.get_read_tasks(8)] == [
        a.stat().st_size,
        b.stat().st_size,
    ]
    # running the tasks here, in this process, gives every record once
    rows = [r for task in tasks for table in task() for r in table.to_pylist()]
    assert len(rows) == 910


def test_globs_folders_and_file_urls_name_the_same_files(ray_local: Any, tmp_path: Path) -> None:
    logs = tmp_path / "logs"
    (logs / "sub").mkdir(parents=True)
    write_log(logs / "1.log", [b"one"])
    write_log(logs / "sub" / "2.log", [b"two"])
    write_log(logs / "_hidden.log", [b"hidden"])
    write_log(logs / ".dot.log", [b"dot"])
    (logs / "_temporary").mkdir()
    write_log(logs / "_temporary" / "3.log", [b"staged"])
    folder = sorted(r["data"] for r in rows_of(read_logs(str(logs))))
    assert folder == [b"one", b"two"]
    globbed = sorted(r["data"] for r in rows_of(read_logs(str(logs / "*.log"))))
    assert globbed == [b"dot", b"hidden", b"one"]  # a glob names what fsspec's glob names
    url = read_logs(f"file://{logs}/sub", include_paths=True, storage_options={})
    assert [(r["data"], r["path"]) for r in rows_of(url)] == [(b"two", f"{logs}/sub/2.log")]
    with pytest.raises(FileNotFoundError):
        read_logs(str(tmp_path / "nothing-*.log"))
    (tmp_path / "hidden-only").mkdir()
    write_log(tmp_path / "hidden-only" / "_x.log", [b"x"])
    with pytest.raises(ValueError, match="No files found under"):
        read_logs(str(tmp_path / "hidden-only"))


def test_the_options_are_checked_before_anything_runs(tmp_path: Path) -> None:
    log = write_log(tmp_path / "x.log", [b"x"])
    with pytest.raises(ValueError, match="recovery must be 'skip', 'tolerate_tail'"):
        read_logs(str(log), recovery="lenient")
    with pytest.raises(ValueError, match="dialect must be 'leveldb', 'rocksdb', 'pebble' or"):
        read_logs(str(log), dialect="sqlite")
    with pytest.raises(ValueError, match="blocksize"):
        read_logs(str(log), blocksize=0)
    with pytest.raises(ValueError, match="log_number"):
        read_logs(str(log), dialect="leveldb", log_number=7)
    with pytest.raises(ValueError, match="decode and corruptions"):
        read_logs(str(log), decode=True, corruptions=True)


def test_auto_detects_each_files_dialect_in_its_task(ray_local: Any, tmp_path: Path) -> None:
    records = payloads("r", 50)
    level = write_log(tmp_path / "a.log", records)
    rocks = write_log(tmp_path / "000007.log", records, dialect="rocksdb", recycle=True)
    pebble = write_log(tmp_path / "000009.log", records, dialect="pebble")
    auto = read_logs(str(tmp_path / "*.log"), include_paths=True)
    by_file: dict[str, list[bytes]] = {}
    for r in sorted(rows_of(auto), key=lambda r: (r["path"], r["offset"])):
        by_file.setdefault(r["path"], []).append(r["data"])
    assert by_file == {str(p): records for p in (rocks, pebble, level)}
    # read as LevelDB's, the recyclable records are damage, and nothing is returned
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        as_leveldb = read_logs(str(rocks), dialect="leveldb")
        assert as_leveldb.count() == 0
    explicit = read_logs(str(rocks), dialect="rocksdb", log_number=7)
    assert [r["data"] for r in rows_of(explicit)] == records


def test_log_number_holds_recyclable_records_to_that_number(ray_local: Any, tmp_path: Path) -> None:
    log = write_log(tmp_path / "w.log", [b"a", b"b"], dialect="rocksdb", recycle=True, log_number=5)
    assert [r["data"] for r in rows_of(read_logs(str(log), log_number=5))] == [b"a", b"b"]
    # another number: every record is an older log's, so the log is empty
    assert read_logs(str(log), log_number=6, dialect="rocksdb").count() == 0


def test_skip_goes_on_after_damage_and_reports_it(ray_local: Any, tmp_path: Path) -> None:
    log, want = damaged_log(tmp_path / "d.log")
    got = [(r["offset"], r["data"]) for r in rows_of(read_logs(str(log), blocksize=BLOCK_SIZE))]
    assert sorted(got) == want
    reports = rows_of(read_logs(str(log), blocksize=BLOCK_SIZE, corruptions=True))
    found: list[Corruption] = []
    reader_rows(log, on_corruption=found.append)
    assert found != []
    assert [(r["path"], r["offset"], r["size"], r["reason"]) for r in reports] == [
        (str(log), c.offset, c.size, c.reason) for c in found
    ]


def read_task(path: Path, **spec: Any) -> list[Any]:
    """Run one whole-file read task of read_logs here, in this process."""
    from leveldb_log._files._listing import ListOptions
    from leveldb_log._files._read import ReadSpec
    from leveldb_log._ray_io import LogDatasource

    source = LogDatasource([str(path)], ReadSpec(**spec), ListOptions("ray"), None)
    (task,) = source.get_read_tasks(1)
    return list(task())


def test_a_read_task_warns_once_for_its_damage_naming_the_file(tmp_path: Path) -> None:
    pytest.importorskip("ray.data")
    log, want = damaged_log(tmp_path / "d.log")
    with pytest.warns(CorruptionWarning) as caught:
        tables = read_task(log)
    found: list[Corruption] = []
    reader_rows(log, on_corruption=found.append)
    assert len(caught) == 1
    message = str(caught[0].message)
    dropped = sum(c.size for c in found)
    assert message.startswith(
        f"{log}: {len(want)} record(s) read; {len(found)} corruption(s), {dropped} bytes "
        f"dropped; the first at offset {found[0].offset}: checksum mismatch"
    )
    assert caught[0].message.corruption is not None
    assert sum(t.num_rows for t in tables) == len(want)


def test_raising_modes_fail_the_read_naming_file_and_offset(ray_local: Any, tmp_path: Path) -> None:
    log, _ = damaged_log(tmp_path / "d.log")
    found: list[Corruption] = []
    reader_rows(log, on_corruption=found.append)
    for recovery in ("tolerate_tail", "absolute"):
        with pytest.raises(CorruptionError) as raised:
            read_logs(str(log), recovery=recovery, blocksize=BLOCK_SIZE).materialize()
        assert f"{log}: checksum mismatch at offset {found[0].offset}" in str(raised.value)


def test_a_torn_tail_stops_quietly_except_in_absolute(ray_local: Any, tmp_path: Path) -> None:
    log = write_log(tmp_path / "t.log", payloads("t", 200))
    whole = reader_rows(log)
    log.write_bytes(log.read_bytes()[:-50])  # the last record cut short
    for recovery in ("skip", "tolerate_tail"):
        got = sorted(
            (r["offset"], r["data"]) for r in rows_of(read_logs(str(log), recovery=recovery))
        )
        assert got == whole[:-1]
    pit = read_logs(str(log), recovery="point_in_time", blocksize=None)
    assert sorted((r["offset"], r["data"]) for r in rows_of(pit)) == whole[:-1]
    with pytest.raises(leveldb_log.TruncatedRecordError, match=str(log)):
        read_logs(str(log), recovery="absolute").materialize()


def test_point_in_time_ends_a_file_at_its_first_damage(ray_local: Any, tmp_path: Path) -> None:
    log, _ = damaged_log(tmp_path / "d.log")
    want = reader_rows(log, recovery="point_in_time", on_corruption=lambda c: None)
    got = read_logs(str(log), recovery="point_in_time", blocksize=None)
    assert sorted((r["offset"], r["data"]) for r in rows_of(got)) == want
    assert want[-1][0] < 2 * BLOCK_SIZE + 1000
    reports = rows_of(
        read_logs(str(log), recovery="point_in_time", blocksize=None, corruptions=True)
    )
    assert [r["reason"] for r in reports] == ["checksum mismatch"]


def test_without_checksums_a_damaged_payload_is_data(ray_local: Any, tmp_path: Path) -> None:
    log, skipped = damaged_log(tmp_path / "d.log")
    unchecked = reader_rows(log, verify_checksums=False)
    got = read_logs(str(log), verify_checksums=False, blocksize=BLOCK_SIZE)
    assert sorted((r["offset"], r["data"]) for r in rows_of(got)) == unchecked
    assert len(unchecked) == 400 > len(skipped)


def test_empty_logs_give_no_rows(ray_local: Any, tmp_path: Path) -> None:
    write_log(tmp_path / "empty.log", [])
    assert read_logs(str(tmp_path / "empty.log")).count() == 0
    assert read_logs(str(tmp_path / "empty.log"), blocksize=None).count() == 0


def test_named_remote_arguments_reach_ray(ray_local: Any, tmp_path: Path) -> None:
    import warnings

    log = write_log(tmp_path / "x.log", payloads("c", 500))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # Ray deprecates ray_remote_args, not these
        ds = read_logs(str(log), blocksize=BLOCK_SIZE, num_cpus=0.5, memory=1 << 20, concurrency=1)
    assert sorted((r["offset"], r["data"]) for r in rows_of(ds)) == reader_rows(log)


def test_remote_arguments_are_handed_to_ray_as_given(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import ray.data

    seen: dict[str, Any] = {}
    monkeypatch.setattr(ray.data, "read_datasource", lambda source, **kw: seen.update(kw))
    log = write_log(tmp_path / "x.log", [b"x"])
    read_logs(str(log), num_cpus=2, num_gpus=1, memory=5, concurrency=3)
    assert seen == dict(num_cpus=2, num_gpus=1, memory=5, concurrency=3, ray_remote_args=None)
    read_logs(str(log), ray_remote_args={"max_retries": 2})
    assert seen["ray_remote_args"] == {"max_retries": 2}
    assert seen["num_cpus"] is seen["memory"] is seen["concurrency"] is None


# Ray deprecates ray_remote_args for the named arguments, and warns; read_logs still hands
# it over for options that have no name.
@pytest.mark.filterwarnings("ignore:`ray_remote_args` is deprecated")
def test_concurrency_and_remote_args_are_taken(ray_local: Any, tmp_path: Path) -> None:
    log = write_log(tmp_path / "x.log", payloads("c", 500))
    ds = read_logs(str(log), blocksize=BLOCK_SIZE, concurrency=1, ray_remote_args={"num_cpus": 1})
    assert sorted((r["offset"], r["data"]) for r in rows_of(ds)) == reader_rows(log)


def test_ray_is_imported_only_when_used_and_named_when_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import subprocess
    import sys

    code = "import sys, leveldb_log, leveldb_log.ray; print('ray' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout == "False\n"
    log = write_log(tmp_path / "x.log", [b"x"])
    monkeypatch.setitem(sys.modules, "ray.data", None)  # as if ray were not installed
    with pytest.raises(ImportError, match=r"pip install 'leveldb-log\[ray\]'"):
        read_logs(str(log))
