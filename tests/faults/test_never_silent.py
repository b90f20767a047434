"""Never destroy, never stay silent (docs/api.md): what a careless hand gets.

Each test is one row of what a new user tried: mode "a" on files that are not logs,
damage read without a callback, wrong arguments, unclosed writers. Files involved are
compared byte for byte before and after.
"""

from __future__ import annotations

import gc
import io
import os
import pathlib
import shutil
import subprocess
import sys
import warnings

import leveldb_log
import pytest
from leveldb_log import CorruptionError, CorruptionWarning, Reader, Writer
from support import model

TEXT = b"# A README\n\nSome notes, not a log at all.\n" * 500


def damaged_log(count: int = 30) -> bytes:
    data, _ = model.encode([b"record %d " % i * 300 for i in range(count)])
    bad = bytearray(data)
    for at in (100, 40000):  # two bad checksums, in two blocks
        bad[at] ^= 0x10
    return bytes(bad)


# ---- mode "a" refuses what is not a log, and changes nothing ---------------------------


@pytest.mark.parametrize(
    "contents",
    [b"hello notes\n", TEXT, pathlib.Path(sys.executable).read_bytes()[:200_000]],
    ids=["12-byte text", "README", "a binary"],
)
def test_mode_a_refuses_a_file_that_is_not_a_log(tmp_path: pathlib.Path, contents: bytes) -> None:
    path = tmp_path / "notes.txt"
    path.write_bytes(contents)
    with pytest.raises(CorruptionError) as info:
        Writer(path, "a")
    message = str(info.value)
    assert "does not end like a log" in message
    assert f"at offset {info.value.offset}" in message
    assert path.read_bytes() == contents


def test_mode_a_refuses_text_after_a_log_and_keeps_both(tmp_path: pathlib.Path) -> None:
    log, _ = model.encode([b"one", b"two"])
    path = tmp_path / "mixed.log"
    path.write_bytes(log + b"some text appended by mistake\n")
    before = path.read_bytes()
    with pytest.raises(CorruptionError) as info:
        Writer(path, "a")
    assert info.value.offset == len(log)
    assert path.read_bytes() == before


def test_mode_a_takes_a_file_of_zeros_for_a_preallocated_log(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "prealloc.log"
    path.write_bytes(bytes(100_000))
    with Writer(path, "a") as w:
        assert w.write(b"first") == 0
    assert list(Reader(path, recovery="absolute")) == [b"first"]


def test_the_refusal_pickles_with_its_message(tmp_path: pathlib.Path) -> None:
    import pickle

    path = tmp_path / "t.txt"
    path.write_bytes(b"hello notes\n")
    with pytest.raises(CorruptionError) as info:
        Writer(path, "a")
    copy = pickle.loads(pickle.dumps(info.value))
    assert str(copy) == str(info.value) and copy.offset == info.value.offset


# ---- damage is never silent by default ---------------------------------------------------


def test_damage_read_without_a_callback_warns_with_each_corruption() -> None:
    data = damaged_log()
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        records = list(Reader(data))
    heard: list[leveldb_log.Corruption] = []
    assert records == list(Reader(data, on_corruption=heard.append))  # records unchanged
    assert len(heard) >= 2
    assert [w.category for w in seen] == [CorruptionWarning] * len(heard)
    assert [w.message.corruption for w in seen] == heard  # type: ignore[union-attr]


def test_a_binary_read_as_a_log_is_not_silent(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "ls"
    shutil.copyfile(sys.executable, path)
    with pytest.warns(CorruptionWarning, match=r"/ls'\)? is damaged"):
        assert list(Reader(path)) == []


def test_a_callback_replaces_the_warning() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        list(Reader(damaged_log(), on_corruption=lambda c: None))


def test_point_in_time_warns_where_it_stops_and_raising_modes_raise() -> None:
    data = damaged_log()
    with pytest.warns(CorruptionWarning, match="reading stopped before the damage"):
        assert list(Reader(data, recovery="point_in_time")) == []
    for mode in ("tolerate_tail", "absolute"):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            with pytest.raises(CorruptionError):
                list(Reader(data, recovery=mode))


def test_a_script_sees_the_warning_once_and_w_error_makes_it_raise(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "damaged.log"
    path.write_bytes(damaged_log())
    script = (
        "import leveldb_log, sys\n"
        "for i in range(3):\n"
        "    n = len(list(leveldb_log.Reader(sys.argv[1])))\n"
        "print(n)\n"
    )
    run = [sys.executable, "-c", script, str(path)]
    shown = subprocess.run(run, capture_output=True, text=True, check=True)
    assert len(shown.stderr.splitlines()) == 1  # one warning line, for three reads
    assert "damaged.log' is damaged: the damage was skipped" in shown.stderr
    strict = subprocess.run([sys.executable, "-W", "error", *run[1:]], capture_output=True)
    assert strict.returncode == 1 and b"CorruptionWarning: " in strict.stderr
    silenced = "import warnings, leveldb_log\n"
    silenced += "warnings.simplefilter('ignore', leveldb_log.CorruptionWarning)\n" + script
    quiet = [sys.executable, "-c", silenced, str(path)]
    assert subprocess.run(quiet, capture_output=True, text=True, check=True).stderr == ""


def test_a_text_file_read_as_a_log_warns_once(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_bytes(b"hello notes\n")
    reader = Reader(path)
    with pytest.warns(CorruptionWarning, match="no writer of this format leaves"):
        assert list(reader) == []
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert list(reader) == []  # once per reader, not at every end of data


def test_a_log_being_written_is_followed_without_a_warning(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "live.log"
    whole, _ = model.encode([b"x" * 5000])
    path.write_bytes(whole[:1000])  # the first record, half written
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        reader = Reader(path)
        assert list(reader) == []
        path.write_bytes(whole)
        assert list(reader) == [b"x" * 5000]


# ---- arguments are checked where they are given -----------------------------------------


def test_a_text_mode_file_is_a_type_error_from_the_constructor(tmp_path: pathlib.Path) -> None:
    with open(tmp_path / "o.log", "w") as f, pytest.raises(TypeError, match="binary file object"):
        Writer(f)
    assert (tmp_path / "o.log").read_bytes() == b""
    with pytest.raises(TypeError, match="refused bytes"):
        Writer(io.StringIO())


@pytest.mark.parametrize(
    ("kwargs", "error", "words"),
    [
        ({"buffering": "big"}, TypeError, "buffering must be an int, not str"),
        ({"buffering": -2}, ValueError, "buffering must be -1, 0 or a size"),
        ({"buffering": 2**40}, ValueError, "buffering must be -1, 0 or a size"),
        ({"buffering": 10**30}, ValueError, "buffering must be -1, 0 or a size"),
    ],
)
def test_bad_buffering_names_the_argument(
    kwargs: dict[str, object], error: type[Exception], words: str
) -> None:
    with pytest.raises(error, match=words):
        Writer(io.BytesIO(), **kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("kwargs", "words"),
    [
        ({"start": 50, "end": 10}, r"end \(10\) must not be less than start \(50\)"),
        ({"start": 10**30}, r"start is too large"),
        ({"end": 2**64}, r"end is too large"),
        ({"start": -1}, r"start must not be negative"),
    ],
)
def test_bad_ranges_are_value_errors_naming_the_argument(
    kwargs: dict[str, int], words: str
) -> None:
    with pytest.raises(ValueError, match=words):
        Reader(b"", **kwargs)


def test_scan_and_splits_open_their_source_at_the_call(tmp_path: pathlib.Path) -> None:
    missing = tmp_path / "missing.log"
    with pytest.raises(FileNotFoundError):
        leveldb_log.scan(missing)
    with pytest.raises(FileNotFoundError):
        leveldb_log.splits(missing, n=2)
    with pytest.raises(TypeError, match="scan"):
        leveldb_log.scan(5)  # type: ignore[arg-type]


def test_scan_closes_the_file_it_opened(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "a.log"
    path.write_bytes(model.encode([b"a", b"b"])[0])
    fds = len(os.listdir("/proc/self/fd"))
    assert [r.kind for r in leveldb_log.scan(path)] == ["record", "record"]
    assert len(os.listdir("/proc/self/fd")) == fds


def test_an_unclosed_writer_with_buffered_records_warns() -> None:
    w = Writer(io.BytesIO())
    w.write(b"still in the buffer")
    with pytest.warns(ResourceWarning, match="unclosed Writer"):
        del w
        gc.collect()


def test_a_flushed_unclosed_writer_does_not_warn() -> None:
    w = Writer(io.BytesIO(), buffering=0)
    w.write(b"already handed over")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        del w
        gc.collect()


# ---- verify says "not a log" ---------------------------------------------------------------


def verify(path: pathlib.Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "leveldb_log", "verify", str(path)],
        capture_output=True,
        text=True,
        check=False,
    )


def test_verify_of_a_binary_says_not_a_log(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "ls"
    shutil.copyfile(sys.executable, path)
    result = verify(path)
    assert result.returncode == 1
    assert result.stdout.splitlines()[-1].endswith(
        "NOT A LOG: no valid record in a file that is not empty"
    )


def test_verify_of_a_text_file_is_not_ok(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_bytes(b"hello notes\n")
    result = verify(path)
    assert result.returncode == 1
    assert "NOT A LOG" in result.stdout and "OK" not in result.stdout


def test_verify_reports_an_implausible_torn_tail_as_damage(tmp_path: pathlib.Path) -> None:
    log, _ = model.encode([b"one", b"two"])
    path = tmp_path / "x.log"
    path.write_bytes(log + b"\x01\x02\x03\x04\xff\x7f\x01partial")  # length can't fit
    result = verify(path)
    assert result.returncode == 1
    assert f"corruption at offset {len(log)}: implausible torn tail: a record length" in (
        result.stdout
    )


def test_verify_of_a_crashed_log_only_notes_the_torn_tail(tmp_path: pathlib.Path) -> None:
    log, _ = model.encode([b"one", b"two" * 1000])
    path = tmp_path / "x.log"
    path.write_bytes(log[:-50])
    result = verify(path)
    assert result.returncode == 0
    assert "note: the log ends in a torn tail" in result.stdout
