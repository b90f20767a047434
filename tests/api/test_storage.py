"""URLs as sources and targets (leveldb_log._storage): memory:// and file:// always, S3
through s3fs against moto's server, which the tests start on 127.0.0.1 themselves.

Every URL read is checked against a Reader over the same bytes in memory: the records,
their offsets and the corruptions reported must be the same.
"""

from __future__ import annotations

import io
import os
import pickle
import subprocess
import sys
import uuid
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import leveldb_log
import pytest
from leveldb_log import BLOCK_SIZE, Reader, Writer, _storage, _testing, splits
from support.s3 import moto_s3

fsspec = pytest.importorskip("fsspec")


def records(n: int = 2000) -> list[bytes]:
    """Records of many sizes, some of them fragmented across blocks."""
    return [bytes([i % 251]) * ((i * 37) % 900 + (40_000 if i % 400 == 7 else 0)) for i in range(n)]


def read_all(source: Any, **options: Any) -> tuple[list[tuple[int, bytes]], list[Any]]:
    """((offset, record) pairs, corruptions) of a whole read."""
    found: list[Any] = []
    out = []
    with Reader(source, on_corruption=found.append, **options) as r:
        for rec in r:
            assert r.last_record_offset is not None
            out.append((r.last_record_offset, rec))
    return out, found


def by_ranges(url: str, n: int, **options: Any) -> tuple[list[tuple[int, bytes]], list[Any]]:
    """read_all over each range of splits(url, n=n), concatenated."""
    out: list[tuple[int, bytes]] = []
    found: list[Any] = []
    storage_options = options.get("storage_options")
    for start, end in splits(url, n=n, storage_options=storage_options):
        got, bad = read_all(url, start=start, end=end, **options)
        out += got
        found += bad
    return out, found


def damaged(data: bytes) -> bytes:
    """A copy with a flipped byte in the second block and one in the fifth."""
    copy = bytearray(data)
    for at in (BLOCK_SIZE + 100, 4 * BLOCK_SIZE + 5000):
        copy[at] ^= 0x40
    return bytes(copy)


@pytest.fixture
def mem() -> Iterator[str]:
    """A fresh memory:// directory, removed afterwards."""
    root = f"memory://test-{uuid.uuid4().hex}"
    yield root
    fs = fsspec.filesystem("memory")
    if fs.exists(root):
        fs.rm(root, recursive=True)


# ---------------------------------------------------------------------------
# memory://
# ---------------------------------------------------------------------------


def test_memory_round_trip_matches_a_buffer(mem: str) -> None:
    recs = records()
    with Writer(f"{mem}/a.log") as w:
        w.write_many(recs)
    data = fsspec.open(f"{mem}/a.log", "rb").open().read()
    assert read_all(f"{mem}/a.log") == read_all(data)
    assert [rec for _, rec in read_all(f"{mem}/a.log")[0]] == recs


def test_memory_damage_and_ranges_report_exactly_once(mem: str) -> None:
    data = _log_bytes(records())
    bad = damaged(data)
    with fsspec.open(f"{mem}/bad.log", "wb") as f:
        f.write(bad)
    whole = read_all(bad)
    assert whole[1], "the damage must be reported"
    assert read_all(f"{mem}/bad.log") == whole
    for n in (2, 3, 7):
        assert by_ranges(f"{mem}/bad.log", n) == whole


def _log_bytes(recs: list[bytes]) -> bytes:
    out = io.BytesIO()
    with Writer(out) as w:
        w.write_many(recs)
        w.flush()
        return out.getvalue()


def test_memory_splits_are_those_of_the_bytes(mem: str) -> None:
    data = _log_bytes(records())
    with fsspec.open(f"{mem}/a.log", "wb") as f:
        f.write(data)
    for n in (1, 2, 5):
        assert splits(f"{mem}/a.log", n=n) == splits(data, n=n)
    assert splits(f"{mem}/a.log", size=3 * BLOCK_SIZE) == splits(data, size=3 * BLOCK_SIZE)


def test_memory_scan_and_stats_are_those_of_the_bytes(mem: str) -> None:
    bad = damaged(_log_bytes(records()))
    with fsspec.open(f"{mem}/bad.log", "wb") as f:
        f.write(bad)
    url = f"{mem}/bad.log"
    assert list(leveldb_log.scan(url, payloads=True)) == list(leveldb_log.scan(bad, payloads=True))
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # stats hears the damage: it never warns
        figures = leveldb_log.stats(url, storage_options={})
    assert figures == leveldb_log.stats(bad)
    assert figures.corrupt


def test_a_url_scan_or_stats_closes_the_file_it_opened(
    mem: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    opened: list[Owned] = []

    def fake(url: str, mode: str, options: Any) -> Owned:
        assert (mode, options) == ("rb", {"anon": True})
        f = Owned(_log_bytes([b"one", b"two"]))
        opened.append(f)
        return f

    monkeypatch.setattr(_storage, "open_url", fake)
    regions = leveldb_log.scan(f"{mem}/a.log", storage_options={"anon": True})
    assert next(regions).kind == "record"
    assert not opened[0].closed
    assert [r.kind for r in regions] == ["record"]
    assert opened[0].closed
    assert leveldb_log.stats(f"{mem}/a.log", storage_options={"anon": True}).records == 2
    assert opened[1].closed


def test_memory_reader_pickles_as_what_reopens_the_url(mem: str) -> None:
    recs = records(500)
    with Writer(f"{mem}/a.log") as w:
        w.write_many(recs)
    r = Reader(f"{mem}/a.log", storage_options={})
    head = [next(r) for _ in range(200)]
    copy = pickle.loads(pickle.dumps(r))
    assert copy.position == r.position
    assert copy.last_record_offset == r.last_record_offset
    assert head + list(copy) == recs
    assert list(r) == recs[200:]
    r.close()
    copy.close()


class Owned(io.BytesIO):
    """A file object that says whether it was closed, and keeps its bytes after."""

    kept = b""

    def close(self) -> None:
        self.kept = self.getvalue()
        super().close()


def test_a_url_reader_or_writer_closes_the_file_it_opened(
    mem: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    opened: list[Owned] = []

    def fake(url: str, mode: str, options: Any) -> Owned:
        f = Owned(_log_bytes([b"one", b"two"]) if mode == "rb" else b"")
        opened.append(f)
        return f

    monkeypatch.setattr(_storage, "open_url", fake)
    with Reader(f"{mem}/a.log") as r:
        assert next(r) == b"one"
        assert not opened[0].closed
    assert opened[0].closed
    r = Reader(f"{mem}/a.log")
    del r
    assert opened[1].closed
    with Writer(f"{mem}/b.log") as w:
        w.write(b"three")
        assert not opened[2].closed
    assert opened[2].closed
    assert list(Reader(opened[2].kept)) == [b"three"]


def test_readers_of_one_memory_object_do_not_move_each_other(mem: str) -> None:
    recs = records(500)
    with Writer(f"{mem}/a.log") as w:
        w.write_many(recs)
    a, b = Reader(f"{mem}/a.log"), Reader(f"{mem}/a.log")
    assert [next(a) for _ in range(100)] == recs[:100]
    assert list(b) == recs
    assert list(a) == recs[100:]


def test_append_to_a_store_is_refused_before_anything(mem: str) -> None:
    with Writer(f"{mem}/a.log") as w:
        w.write(b"kept")
    before = fsspec.open(f"{mem}/a.log", "rb").open().read()
    with pytest.raises(ValueError, match=r"mode 'a' needs a local file.*memory://"):
        Writer(f"{mem}/a.log", "a")
    with pytest.raises(ValueError, match="mode 'a'"):
        Writer(f"{mem}/new.log", "a")
    assert fsspec.open(f"{mem}/a.log", "rb").open().read() == before
    assert not fsspec.filesystem("memory").exists(f"{mem}/new.log")


def test_mode_x_on_a_store(mem: str) -> None:
    with Writer(f"{mem}/a.log", "x") as w:
        w.write(b"first")
    with pytest.raises(FileExistsError) as e:
        Writer(f"{mem}/a.log", "x")
    assert e.value.filename == f"{mem}/a.log"
    assert list(Reader(f"{mem}/a.log")) == [b"first"]


def test_missing_object_names_the_url(mem: str) -> None:
    with pytest.raises(FileNotFoundError) as e:
        Reader(f"{mem}/missing.log")
    assert e.value.filename == f"{mem}/missing.log"
    with pytest.raises(FileNotFoundError):
        splits(f"{mem}/missing.log", n=2)


def test_corruption_warning_names_the_url(mem: str) -> None:
    with fsspec.open(f"{mem}/bad.log", "wb") as f:
        f.write(damaged(_log_bytes(records())))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        list(Reader(f"{mem}/bad.log"))
    texts = [
        str(w.message) for w in caught if issubclass(w.category, leveldb_log.CorruptionWarning)
    ]
    assert texts and all(f"'{mem}/bad.log'" in t for t in texts)


def test_storage_options_belong_to_urls(tmp_path: Path, mem: str) -> None:
    path = tmp_path / "a.log"
    with Writer(path) as w:
        w.write(b"x")
    with pytest.raises(ValueError, match="storage_options applies to URLs"):
        Reader(path, storage_options={})
    with pytest.raises(ValueError, match="storage_options applies to URLs"):
        Reader(b"", storage_options={"anon": True})
    with pytest.raises(ValueError, match="storage_options applies to URLs"):
        Writer(tmp_path / "b.log", storage_options={})
    with pytest.raises(ValueError, match="storage_options applies to URLs"):
        splits(path, n=1, storage_options={})
    with pytest.raises(ValueError, match="storage_options applies to URLs"):
        leveldb_log.scan(path, storage_options={})
    with pytest.raises(ValueError, match="storage_options applies to URLs"):
        leveldb_log.stats(b"", storage_options={})
    with pytest.raises(TypeError, match="storage_options must be a mapping"):
        Reader(f"{mem}/a.log", storage_options=[1])
    assert not (tmp_path / "b.log").exists()


@pytest.mark.parametrize(
    "text",
    [
        "s3://bucket/key.log",
        "memory://x",
        "gcs://b/k",
        "file:///tmp/x",
        "my+scheme.v2-x://a",
        "C:\\logs\\a.log",
        "C:/logs/a.log",
        "relative/s3://x",
        "1s3://x",
        "://x",
        "s3:/x",
        "plain.log",
        "",
    ],
)
def test_the_binding_and_storage_agree_on_what_a_url_is(
    text: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)  # Writer(text, "x") makes the files that are no URL

    class Asked(Exception):
        pass

    def refuse(url: str, mode: str, options: Any) -> Any:
        raise Asked(url)

    monkeypatch.setattr(_storage, "open_url", refuse)
    for make in (lambda: Reader(text), lambda: Writer(text, "x")):
        try:
            obj = make()
            obj.close()
            asked = False
        except Asked:
            asked = True
        except OSError:
            asked = False
        assert asked == _storage.is_url(text), text


# ---------------------------------------------------------------------------
# file://
# ---------------------------------------------------------------------------


def test_file_urls_are_paths(tmp_path: Path) -> None:
    url = (tmp_path / "a.log").as_uri()
    recs = [*records(300), b"long" * 100_000]
    with Writer(url) as w:
        w.write_many(recs)
    assert read_all(url) == read_all(tmp_path / "a.log")
    if sys.platform.startswith("linux"):  # read as a path: long records land in place
        with Reader(url) as whole:
            assert list(whole) == recs
            assert _testing.blocks_in_place(whole) > 0
    r = Reader(url)
    next(r)
    copy = pickle.loads(pickle.dumps(r))
    assert list(copy) == recs[1:]
    r.close()
    copy.close()
    assert splits(url, n=3) == splits(tmp_path / "a.log", n=3)
    assert leveldb_log.stats(url) == leveldb_log.stats(tmp_path / "a.log")
    assert list(leveldb_log.scan(url)) == list(leveldb_log.scan(tmp_path / "a.log"))


def test_file_url_appends_after_a_torn_tail(tmp_path: Path) -> None:
    path = tmp_path / "a.log"
    with Writer(path) as w:
        w.write(b"whole")
        w.write(b"torn" * 100)
    os.truncate(path, path.stat().st_size - 50)
    with Writer(path.as_uri(), "a") as w:
        w.write(b"after")
    assert list(Reader(path, recovery="absolute")) == [b"whole", b"after"]


# ---------------------------------------------------------------------------
# fsspec and plain paths
# ---------------------------------------------------------------------------

_NO_FSSPEC = """
import sys
sys.modules["fsspec"] = None  # import fsspec now raises ImportError
import leveldb_log
from leveldb_log._storage import FsspecMissingError
for call in (
    lambda: leveldb_log.Reader("s3://bucket/a.log"),
    lambda: leveldb_log.Writer("s3://bucket/a.log"),
    lambda: leveldb_log.splits("s3://bucket/a.log", n=2),
    lambda: leveldb_log.scan("s3://bucket/a.log"),
    lambda: leveldb_log.stats("s3://bucket/a.log"),
    lambda: leveldb_log.database_logs("s3://bucket/db"),
):
    try:
        call()
    except ImportError as e:
        assert isinstance(e, FsspecMissingError), e
        assert "leveldb-log[fsspec]" in str(e), e
    else:
        raise AssertionError("no ImportError")
from leveldb_log.cli import main
assert main(["cat", "s3://bucket/db"]) == 2  # a usage error naming the extra
print("ok")
"""


def test_a_url_without_fsspec_raises_an_import_error_naming_the_extra() -> None:
    result = subprocess.run(
        [sys.executable, "-c", _NO_FSSPEC], capture_output=True, text=True, check=False
    )
    assert result.stdout.strip() == "ok", result.stderr


_PLAIN = """
import sys, leveldb_log
path = sys.argv[1]
with leveldb_log.Writer(path) as w:
    w.write(b"x")
with leveldb_log.Writer(path, "a") as w:
    w.write(b"y")
assert list(leveldb_log.Reader(path)) == [b"x", b"y"]
assert leveldb_log.splits(path, n=2) == [(0, 16)]
assert [r.kind for r in leveldb_log.scan(path)] == ["record", "record"]
assert leveldb_log.stats(path).records == 2
from leveldb_log.cli import main
assert main(["verify", "-q", path]) == 0
assert "fsspec" not in sys.modules
print("ok")
"""


def test_plain_paths_never_import_fsspec(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-c", _PLAIN, str(tmp_path / "a.log")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.stdout.strip() == "ok", result.stderr


# ---------------------------------------------------------------------------
# S3: s3fs against moto's server on 127.0.0.1
# ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def s3() -> Iterator[dict[str, Any]]:
    """A moto S3 server on 127.0.0.1 with a bucket "logs"; yields the storage options."""
    with moto_s3() as options:
        yield options


def test_s3_write_read_and_ranges(s3: dict[str, Any]) -> None:
    recs = records()
    url = "s3://logs/round.log"
    with Writer(url, storage_options=s3) as w:
        w.write_many(recs)
    data = _log_bytes(recs)
    assert _storage.size(url, s3) == len(data)
    assert splits(url, n=4, storage_options=s3) == splits(data, n=4)
    whole = read_all(data)
    assert read_all(url, storage_options=s3) == whole
    assert by_ranges(url, 4, storage_options=s3) == whole


def test_s3_damaged_log_by_ranges(s3: dict[str, Any]) -> None:
    bad = damaged(_log_bytes(records()))
    with fsspec.open("s3://logs/bad.log", "wb", **s3) as f:
        f.write(bad)
    whole = read_all(bad)
    assert whole[1]
    assert read_all("s3://logs/bad.log", storage_options=s3) == whole
    assert by_ranges("s3://logs/bad.log", 3, storage_options=s3) == whole


def test_s3_modes_and_pickling(s3: dict[str, Any]) -> None:
    url = "s3://logs/modes.log"
    with Writer(url, "x", storage_options=s3) as w:
        w.write(b"a")
        w.write(b"b")
    with pytest.raises(FileExistsError):
        Writer(url, "x", storage_options=s3)
    with pytest.raises(ValueError, match=r"mode 'a' needs a local file.*s3://"):
        Writer(url, "a", storage_options=s3)
    r = Reader(url, storage_options=s3)
    assert next(r) == b"a"
    copy = pickle.loads(pickle.dumps(r))
    assert list(copy) == [b"b"]
    r.close()
    copy.close()


def _cli(*args: str, stdin: bytes = b"") -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "leveldb_log", *args],
        input=stdin,
        capture_output=True,
        check=False,
        timeout=120,
    )


def _cli_options(s3: dict[str, Any]) -> list[str]:
    """The --storage-option arguments that reach the moto server."""
    return [
        "--storage-option",
        f"endpoint_url={s3['endpoint_url']}",
        "--storage-option",
        "key=testing",
        "--storage-option",
        "secret=testing",
        "--storage-option",
        'client_kwargs={"region_name": "us-east-1"}',
    ]


def test_s3_command_line(s3: dict[str, Any]) -> None:
    options = _cli_options(s3)
    url = "s3://logs/cli.log"
    lines = b"".join(b"line %d\n" % i for i in range(5000))
    done = _cli("write", *options, url, stdin=lines)
    assert done.returncode == 0, done.stderr
    done = _cli("cat", *options, url)
    assert (done.returncode, done.stdout) == (0, lines), done.stderr
    done = _cli("verify", *options, url)
    assert done.returncode == 0 and b"OK: 5000 records" in done.stdout, done.stderr
    done = _cli("split", "-n", "2", *options, url)
    expected = splits(url, n=2, storage_options=s3)
    assert done.stdout.decode().split() == [str(x) for pair in expected for x in pair]
    done = _cli("write", "--append", *options, url, stdin=b"more\n")
    assert done.returncode == 2 and b"--append needs a local file" in done.stderr
    assert list(Reader(url, storage_options=s3))[-1] == b"line 4999"
    done = _cli("cat", *options, "s3://logs/missing.log")
    assert done.returncode == 2 and b"s3://logs/missing.log" in done.stderr


def test_s3_database_folder(s3: dict[str, Any]) -> None:
    """A database folder on S3: database_logs lists its logs as URLs; cat reads them."""
    fs = fsspec.filesystem("s3", **s3)
    fs.pipe("logs/db/CURRENT", b"MANIFEST-000002\n")
    fs.pipe("logs/db/MANIFEST-000002", _log_bytes([b"edit"]))
    fs.pipe("logs/db/000004.ldb", b"a table, no log" * 100)
    fs.pipe("logs/db/LOG", b"an info log\n")
    fs.pipe("logs/db/000010.log", _log_bytes([b"ten"]))
    fs.pipe("logs/db/000009.log", _log_bytes([b"nine"]))
    assert leveldb_log.database_logs("s3://logs/db", manifest=True, storage_options=s3) == [
        "s3://logs/db/MANIFEST-000002",
        "s3://logs/db/000009.log",
        "s3://logs/db/000010.log",
    ]
    options = _cli_options(s3)
    done = _cli("cat", *options, "s3://logs/db")
    assert (done.returncode, done.stdout, done.stderr) == (0, b"nine\nten\n", b"")
