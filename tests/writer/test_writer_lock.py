"""One writer per file (docs/api.md, "One Writer per file"): a Writer on a path holds an
exclusive advisory lock until it closes. A second Writer, in this process or another, or
the command line's ``write``, raises LogLockedError (an OSError naming the file and, on
Linux, the holder's pid) and leaves the file byte for byte; ``lock=False`` opts out;
Readers never lock.
"""

from __future__ import annotations

import errno
import os
import subprocess
import sys

import pytest
from leveldb_log import LogLockedError, Reader, Writer
from support.cli import run_cli_asserting_no_traceback
from support.files import read_file

LINUX = sys.platform.startswith("linux")


def make_log(path, n: int = 20) -> bytes:
    with Writer(path) as w:
        for i in range(n):
            w.write(b"rec%03d" % i * 10)
    return read_file(path)


@pytest.mark.parametrize("mode", ["w", "a"])
def test_second_writer_in_this_process_is_refused_and_changes_nothing(tmp_path, mode):
    p = tmp_path / "a.log"
    make_log(p)
    with Writer(p, "a") as first:
        first.write(b"pending")  # buffered, not yet in the file
        before = read_file(p)
        with pytest.raises(LogLockedError) as info:
            Writer(p, mode)
        assert read_file(p) == before  # "w" did not truncate, "a" did not cut
        e = info.value
        assert isinstance(e, OSError) and e.errno == errno.EAGAIN
        assert e.filename == p and str(p) in str(e)
        if LINUX:
            assert e.pid == os.getpid() and f"process {os.getpid()}" in str(e)
        first.write(b"more")
    assert list(Reader(p))[-2:] == [b"pending", b"more"]


def test_mode_x_on_a_locked_file_is_file_exists(tmp_path):
    p = tmp_path / "a.log"
    with Writer(p):
        with pytest.raises(FileExistsError):
            Writer(p, "x")


def test_lock_is_released_on_close(tmp_path):
    p = tmp_path / "a.log"
    w = Writer(p)
    w.close()
    with Writer(p, "a") as w2:
        w2.write(b"x")
    # and when a Writer is collected without close()
    w3 = Writer(p, "a")
    del w3
    Writer(p, "a").close()


def test_lock_false_opts_out(tmp_path):
    p = tmp_path / "a.log"
    with Writer(p, lock=False) as a, Writer(p, "a", lock=False) as b:
        assert a.mode == "w" and b.mode == "a"
    # A Writer with lock=False does not hold the lock either.
    with Writer(p, "a", lock=False), Writer(p, "a"):
        pass


def test_readers_never_lock_and_read_a_locked_log(tmp_path):
    p = tmp_path / "a.log"
    with Writer(p, buffering=0) as w:
        w.write(b"one")
        r = Reader(p)
        assert next(r) == b"one"
        w.write(b"two")
        assert list(Reader(p)) == [b"one", b"two"]
        with open(p, "rb") as f:  # a file object too
            assert list(Reader(f)) == [b"one", b"two"]


def test_devices_are_not_locked():
    with Writer(os.devnull) as a, Writer(os.devnull) as b:
        a.write(b"x")
        b.write(b"y")


def test_file_objects_are_not_locked(tmp_path):
    p = tmp_path / "a.log"
    with Writer(p), open(p, "r+b") as f, Writer(f) as w:
        w.write(b"the caller's own object")


_HOLDER = r"""
import sys
from leveldb_log import Writer
w = Writer(sys.argv[1], "a")
w.write(b"held")
w.flush()
print("locked", flush=True)
sys.stdin.read()
w.write(b"released")
w.close()
"""


@pytest.fixture
def held_by_another_process(tmp_path):
    p = tmp_path / "held.log"
    make_log(p)
    with subprocess.Popen(  # its exit closes both pipes
        [sys.executable, "-c", _HOLDER, str(p)], stdin=subprocess.PIPE, stdout=subprocess.PIPE
    ) as proc:
        assert proc.stdout.readline() == b"locked\n"
        yield p, proc
        proc.stdin.close()
        assert proc.wait(30) == 0


@pytest.mark.parametrize("mode", ["w", "a"])
def test_second_writer_in_another_process(held_by_another_process, mode):
    p, proc = held_by_another_process
    before = read_file(p)
    with pytest.raises(LogLockedError) as info:
        Writer(p, mode)
    assert read_file(p) == before
    assert info.value.filename == p
    if LINUX:
        assert info.value.pid == proc.pid and f"process {proc.pid})" in str(info.value)


@pytest.mark.parametrize("append", [False, True])
def test_cli_write_honours_the_lock(held_by_another_process, append):
    p, _ = held_by_another_process
    before = read_file(p)
    args = ["write", str(p)] + (["--append"] if append else [])
    result = run_cli_asserting_no_traceback(*args, input=b"new record\n")
    assert result.returncode != 0
    assert b"locked by another Writer" in result.stderr
    assert read_file(p) == before
    assert not [n for n in os.listdir(p.parent) if n.endswith(".tmp")]


@pytest.mark.parametrize("append", [False, True])
def test_cli_write_works_when_unlocked(tmp_path, append):
    p = tmp_path / "free.log"
    make_log(p, 2)
    args = ["write", str(p)] + (["--append"] if append else [])
    result = run_cli_asserting_no_traceback(*args, input=b"new record\n")
    assert result.returncode == 0, result.stderr
    assert list(Reader(p))[-1] == b"new record"


def test_lock_error_pickles_and_is_exported():
    import pickle

    import leveldb_log

    assert leveldb_log.LogLockedError is LogLockedError
    e = LogLockedError(errno.EAGAIN, "locked", "x.log")
    e2 = pickle.loads(pickle.dumps(e))
    assert isinstance(e2, LogLockedError) and e2.filename == "x.log"
