"""``leveldb-log write`` under signals: SIGTERM and SIGHUP roll back as SIGINT does (the
target byte for byte as it was, no temporary file, exit status 128 + the signal), a
temporary file SIGKILL leaves is removed by the next ``write`` to that target, and errors
name the user's path, never a temporary file (docs/api.md, "Command line")."""

from __future__ import annotations

import os
import pathlib
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator

import leveldb_log
import pytest
from support.cli import run_cli_asserting_no_traceback

SIGNALS = [signal.SIGTERM, signal.SIGHUP, signal.SIGINT]

# Runs the command line with the records of an append handed over by a generator that
# signals its own process once the log has grown: the signal lands inside write_many,
# after records have reached the log, every time (no race with the process's progress).
SIGNAL_MID_APPEND = """
import os, sys
from leveldb_log.cli import _atomic, main
signum, target = int(sys.argv[1]), sys.argv[-1]
unspool = _atomic._unspool
def signalling(spool):
    size = os.path.getsize(target)
    for i, record in enumerate(unspool(spool)):
        if os.path.getsize(target) > size + 100_000:
            print("grown to", os.path.getsize(target), file=sys.stderr, flush=True)
            os.kill(os.getpid(), signum)
        yield record
_atomic._unspool = signalling
sys.exit(main(sys.argv[2:]))
"""


@pytest.fixture(autouse=True)
def sigint_reaches_the_children() -> Iterator[None]:
    """Children start with SIGINT at its default, however pytest was started: a shell's
    background job ignores SIGINT, and an ignored signal stays ignored across exec, so the
    command line would never see the SIGINT these tests send."""
    if signal.getsignal(signal.SIGINT) is not signal.SIG_IGN:
        yield
        return
    signal.signal(signal.SIGINT, signal.default_int_handler)  # reset to default by exec
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, signal.SIG_IGN)


def a_log(path: pathlib.Path, torn: bool = True) -> bytes:
    with leveldb_log.Writer(path) as w:
        for i in range(20):
            w.write(b"old record %d " % i + b"o" * 3000)
    data = path.read_bytes()[: -500 if torn else None]
    path.write_bytes(data)
    return data


def lines(n: int) -> bytes:
    return b"".join(b"new record %d %s\n" % (i, b"n" * 90) for i in range(n))


def wait_for_temporary_file(folder: pathlib.Path, proc: subprocess.Popen[bytes]) -> str:
    """The name of the temporary file the running ``write`` made (waits for it to exist)."""
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        made = [p.name for p in folder.iterdir() if p.name.endswith(".tmp")]
        if made:
            return made[0]
        assert proc.poll() is None, proc.communicate()
        time.sleep(0.01)
    raise AssertionError("write made no temporary file")


def a_replacing_write_under_way(
    target: pathlib.Path, output: int
) -> tuple[subprocess.Popen[bytes], str]:
    """``leveldb-log write TARGET`` in a child, fed 5,000 lines with its input left open, once
    it is writing (its temporary file exists): (the child, that file's name). ``output``:
    where its standard output and error go."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "leveldb_log", "write", str(target)],
        stdin=subprocess.PIPE,
        stdout=output,
        stderr=output,
    )
    assert proc.stdin is not None
    proc.stdin.write(lines(5000))
    proc.stdin.flush()
    return proc, wait_for_temporary_file(target.parent, proc)


@pytest.mark.parametrize("signum", SIGNALS, ids=lambda s: signal.Signals(s).name)
def test_a_signal_during_a_replacing_write_leaves_the_target_as_it_was(
    tmp_path: pathlib.Path, signum: int
) -> None:
    target = tmp_path / "t.log"
    before = a_log(target, torn=False)
    proc, _ = a_replacing_write_under_way(target, subprocess.PIPE)
    proc.send_signal(signum)
    _, stderr = proc.communicate(timeout=120)
    assert b"Traceback" not in stderr, stderr.decode()
    assert proc.returncode == 128 + signum
    assert target.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir()] == ["t.log"]


@pytest.mark.parametrize("signum", SIGNALS, ids=lambda s: signal.Signals(s).name)
def test_a_signal_during_an_append_puts_the_log_back_byte_for_byte(
    tmp_path: pathlib.Path, signum: int
) -> None:
    target = tmp_path / "t.log"
    before = a_log(target)  # with a torn tail, which the append cuts first
    source = tmp_path / "input"
    source.write_bytes(lines(20_000))
    argv = [str(signum), "write", "--append", "--input", str(source), str(target)]
    result = subprocess.run(
        [sys.executable, "-c", SIGNAL_MID_APPEND, *argv],
        capture_output=True,
        timeout=120,
        check=False,
    )
    assert b"Traceback" not in result.stderr, result.stderr.decode()
    grown = int(result.stderr.split(b"grown to ")[1].split()[0])
    assert grown > len(before) + 100_000  # new records had reached the log
    assert result.returncode == 128 + signum
    assert target.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["input", "t.log"]


def test_a_temporary_file_sigkill_left_is_removed_by_the_next_write(
    tmp_path: pathlib.Path,
) -> None:
    target = tmp_path / "t.log"
    before = a_log(target, torn=False)
    proc, left = a_replacing_write_under_way(target, subprocess.DEVNULL)
    proc.kill()
    proc.wait(timeout=120)
    proc.stdin.close()
    assert target.read_bytes() == before
    assert left.startswith(f".t.log.leveldb-log.{socket.gethostname()}.{proc.pid}.")
    assert (tmp_path / left).exists()  # what SIGKILL leaves

    result = run_cli_asserting_no_traceback("write", target, input=b"after\n")
    assert result.returncode == 0, result.stderr
    message = result.stderr.decode()
    assert f"removed {str(tmp_path / left)!r}" in message and str(target) in message
    assert [p.name for p in tmp_path.iterdir()] == ["t.log"]
    assert list(leveldb_log.Reader(target)) == [b"after"]


def test_the_next_write_leaves_other_temporary_files_alone(tmp_path: pathlib.Path) -> None:
    host = socket.gethostname()
    others = [
        f".t.log.leveldb-log.{host}.{os.getpid()}.abcdefgh.tmp",  # a process still running
        f".t.log.leveldb-log.elsewhere.{2**22 + 12345}.abcdefgh.tmp",  # another machine
        f".u.log.leveldb-log.{host}.{2**22 + 12345}.abcdefgh.tmp",  # another target
        ".t.log.abcdefgh.tmp",  # not ours
    ]
    for name in others:
        (tmp_path / name).write_bytes(b"keep")
    result = run_cli_asserting_no_traceback("write", tmp_path / "t.log", input=b"a\n")
    assert result.returncode == 0 and result.stderr == b""
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([*others, "t.log"])


def test_an_error_names_the_target_not_the_temporary_file(tmp_path: pathlib.Path) -> None:
    target = tmp_path / "missing" / "t.log"
    result = run_cli_asserting_no_traceback("write", target, input=b"a\n")
    assert result.returncode == 2
    assert result.stderr.decode() == (
        f"leveldb-log: cannot access {str(target)!r}: No such file or directory\n"
    )
