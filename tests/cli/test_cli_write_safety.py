"""``leveldb-log write`` is all or nothing: a command that fails leaves its target byte for
byte as it was (docs/api.md, "Command line"), with or without ``--append``; and the small
promises around it (``--version``, the jsonl message)."""

from __future__ import annotations

import os
import pathlib
import resource
import stat
import subprocess
import sys
import tempfile

import leveldb_log
import pytest
from support.cli import run_cli_asserting_no_traceback

TEXT = b"# A README\n\nSome notes, not a log.\n" * 600  # 20 KB of text


run = run_cli_asserting_no_traceback


def files_in(folder: pathlib.Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def a_log_with_a_torn_tail(path: pathlib.Path) -> bytes:
    with leveldb_log.Writer(path) as w:
        w.write(b"first")
        w.write(b"second")
        w.write(b"x" * 50_000)
    data = path.read_bytes()[:-100]  # the last record torn: what a crash leaves
    path.write_bytes(data)
    return data


def test_version_prints_the_version() -> None:
    result = run("--version")
    assert result.returncode == 0
    assert result.stdout.decode().strip() == f"leveldb-log {leveldb_log.__version__}"


@pytest.mark.parametrize("bad_line", [1, 2])
def test_bad_jsonl_leaves_an_existing_target_as_it_was(
    tmp_path: pathlib.Path, bad_line: int
) -> None:
    target = tmp_path / "old.log"
    with leveldb_log.Writer(target) as w:
        w.write(b"kept")
    before = target.read_bytes()
    lines = [b'"fine"\n', b'"also fine"\n']
    lines[bad_line - 1] = b"not json\n"
    result = run("write", "--format", "jsonl", target, input=b"".join(lines))
    assert result.returncode == 2
    assert f"input line {bad_line}".encode() in result.stderr
    assert b'each line must be a JSON string or {"base64": "..."}' in result.stderr
    assert target.read_bytes() == before
    assert files_in(tmp_path) == ["old.log"]  # no temporary file left behind


def test_write_replaces_a_target_atomically_and_keeps_its_mode(tmp_path: pathlib.Path) -> None:
    target = tmp_path / "out.log"
    target.write_bytes(b"old contents")
    target.chmod(0o640)
    result = run("write", target, input=b"a\nb\n")
    assert result.returncode == 0, result.stderr
    assert list(leveldb_log.Reader(target)) == [b"a", b"b"]
    assert stat.S_IMODE(target.stat().st_mode) == 0o640
    assert files_in(tmp_path) == ["out.log"]


def test_a_new_target_gets_the_umask_mode(tmp_path: pathlib.Path) -> None:
    old = os.umask(0o027)
    try:
        result = run("write", tmp_path / "new.log", input=b"a\n")
    finally:
        os.umask(old)
    assert result.returncode == 0, result.stderr
    assert stat.S_IMODE((tmp_path / "new.log").stat().st_mode) == 0o640


def test_input_ending_inside_a_record_leaves_the_target_alone(tmp_path: pathlib.Path) -> None:
    target = tmp_path / "t.log"
    target.write_bytes(b"whatever was here")
    result = run("write", "--length-prefixed", target, input=b"\x05\x00\x00\x00abc")
    assert result.returncode == 2
    assert target.read_bytes() == b"whatever was here"
    assert files_in(tmp_path) == ["t.log"]


def test_a_symbolic_link_stays_a_link_to_the_new_log(tmp_path: pathlib.Path) -> None:
    real = tmp_path / "real.log"
    real.write_bytes(b"")
    link = tmp_path / "link.log"
    link.symlink_to(real)
    assert run("write", link, input=b"via link\n").returncode == 0
    assert link.is_symlink()
    assert list(leveldb_log.Reader(real)) == [b"via link"]


def test_a_device_is_written_in_place() -> None:
    result = run("write", "/dev/null", input=b"a\n")
    assert result.returncode == 0, result.stderr
    assert stat.S_ISCHR(os.stat("/dev/null").st_mode)


def test_append_to_a_text_file_is_refused_and_changes_nothing(tmp_path: pathlib.Path) -> None:
    readme = tmp_path / "README.md"
    readme.write_bytes(TEXT)
    result = run("write", "--append", readme, input=b"hi\n")
    assert result.returncode == 1
    message = result.stderr.decode()
    assert "does not end like a log" in message and "offset" in message
    assert readme.read_bytes() == TEXT


def test_a_refused_append_closes_its_temporary_files(
    tmp_path: pathlib.Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from leveldb_log.cli import _atomic

    made: list[tempfile.SpooledTemporaryFile[bytes]] = []

    class Recorded(tempfile.SpooledTemporaryFile):  # type: ignore[type-arg]
        def __init__(self, *args: object, **kwargs: object) -> None:
            super().__init__(*args, **kwargs)  # type: ignore[arg-type]
            made.append(self)

    monkeypatch.setattr(_atomic.tempfile, "SpooledTemporaryFile", Recorded)
    readme = tmp_path / "README.md"
    readme.write_bytes(TEXT)
    with pytest.raises(leveldb_log.CorruptionError, match="does not end like a log"):
        _atomic.append(str(readme), [b"hi"])
    assert len(made) == 2  # the records' spool and the saved tail
    assert all(f.closed for f in made)
    assert readme.read_bytes() == TEXT


def test_append_with_bad_input_changes_nothing(tmp_path: pathlib.Path) -> None:
    log = tmp_path / "torn.log"
    before = a_log_with_a_torn_tail(log)
    result = run("write", "--append", "--format", "jsonl", log, input=b'"ok"\n[1]\n')
    assert result.returncode == 2
    assert log.read_bytes() == before  # the torn tail too: "a" never opened the log


def test_append_that_succeeds_cuts_the_torn_tail(tmp_path: pathlib.Path) -> None:
    log = tmp_path / "torn.log"
    a_log_with_a_torn_tail(log)
    assert run("write", "--append", log, input=b"new\n").returncode == 0
    assert list(leveldb_log.Reader(log, recovery="absolute")) == [b"first", b"second", b"new"]


def _append_under_a_size_limit(log: pathlib.Path, limit: int) -> subprocess.CompletedProcess[bytes]:
    def limit_file_size() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return subprocess.run(
        [sys.executable, "-m", "leveldb_log", "write", "--append", str(log)],
        input=b"y" * 200_000 + b"\n",
        capture_output=True,
        timeout=120,
        preexec_fn=limit_file_size,
        check=False,
    )


def test_append_that_fails_writing_puts_the_torn_tail_back(tmp_path: pathlib.Path) -> None:
    log = tmp_path / "torn.log"
    before = a_log_with_a_torn_tail(log)
    result = _append_under_a_size_limit(log, len(before) + 1000)
    assert result.returncode == 2, result.stderr
    assert b"File too large" in result.stderr
    assert log.read_bytes() == before


def test_append_to_a_new_file_that_fails_leaves_no_file(tmp_path: pathlib.Path) -> None:
    log = tmp_path / "new.log"
    result = _append_under_a_size_limit(log, 1000)
    assert result.returncode == 2
    assert not log.exists()
