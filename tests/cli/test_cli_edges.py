"""The command line on edge inputs and in its messages: a FIFO, an export folder, long names,
a full disk, names as typed, names that are not UTF-8, progress bars on a terminal."""

from __future__ import annotations

import fcntl
import os
import pathlib
import pty
import select
import struct
import subprocess
import sys
import termios
import threading

import leveldb_log
import pytest
from leveldb_log import datastore as ds
from leveldb_log.cli import _progress
from support import model
from support.cli import run_cli_asserting_no_traceback
from support.datastore_build import write_export, write_log

run = run_cli_asserting_no_traceback


# ---------------------------------------------------------------------------
# stats of a FIFO, verify of an export, stats' table
# ---------------------------------------------------------------------------


def test_stats_reads_a_fifo_once(tmp_path: pathlib.Path) -> None:
    """stats opened a FIFO twice (its layout, then its records) and waited forever for a
    second writer; it reads it once, with the figures of the same log as a file."""
    data, _ = model.encode([b"r%d" % i * 50 for i in range(300)])
    (tmp_path / "file.log").write_bytes(data)
    fifo = tmp_path / "fifo.log"
    os.mkfifo(fifo)

    def feed() -> None:
        with open(fifo, "wb") as f:  # waits for the command to open the FIFO
            f.write(data)

    writer = threading.Thread(target=feed, daemon=True)
    writer.start()
    got = run("stats", "--json", fifo)
    writer.join(timeout=60)
    assert got.returncode == 0, got.stderr
    assert got.stdout == run("stats", "--json", tmp_path / "file.log").stdout


def _export(folder: pathlib.Path) -> pathlib.Path:
    key = ds.Key([("k", "a")])
    entities = [[ds.Entity({"v": i}, key=key) for i in range(3)], [], [ds.Entity({}, key=key)]]
    return write_export(folder, [("k", entities)])


def test_verify_takes_an_export_folder_and_verifies_each_of_its_logs(
    tmp_path: pathlib.Path,
) -> None:
    overall = _export(tmp_path / "e")
    got = run("verify", tmp_path / "e")
    assert got.returncode == 0, got.stderr
    out = got.stdout.decode().splitlines()
    outputs = sorted((tmp_path / "e").rglob("output-*"))
    assert out[0] == f"{overall}: OK: 2 records"
    assert sorted(out[1:-1]) == sorted(
        f"{p}: OK: {len(list(leveldb_log.Reader(p)))} records" for p in outputs
    )
    assert out[-1] == f"{tmp_path / 'e'}: OK: {1 + len(outputs)} logs"
    summary = f"{overall}: OK: {1 + len(outputs)} logs"
    assert run("verify", overall).stdout.decode().splitlines() == [*out[:-1], summary]
    damaged = outputs[0].read_bytes()
    outputs[0].write_bytes(damaged[:10] + bytes([damaged[10] ^ 1]) + damaged[11:])
    bad = run("verify", tmp_path / "e")
    assert bad.returncode == 1
    assert bad.stdout.decode().splitlines()[-1] == (
        f"{tmp_path / 'e'}: CORRUPT: 1 of {1 + len(outputs)} logs"
    )
    assert run("verify", "-q", tmp_path / "e").stdout == b""


def _table_columns(text: str) -> set[int]:
    """Where the numbers of stats' table end, one per row (the histogram excluded)."""
    rows = [row for row in text.splitlines() if row.strip() and "#" not in row]
    return {len(row) for row in rows if row != "record sizes:"}


def test_stats_aligns_long_names(tmp_path: pathlib.Path) -> None:
    key = ds.Key([("AKindWithAVeryLongNameIndeed", "a")])
    out = tmp_path / "output-0"
    write_log(out, [ds.encode_entity(ds.Entity({"v": 1}, key=key))])
    got = run("stats", out)
    assert got.returncode == 0, got.stderr
    assert "AKindWithAVeryLongNameIndeed" in got.stdout.decode()
    assert len(_table_columns(got.stdout.decode())) == 1, got.stdout.decode()
    folder = run("stats", write_export(tmp_path / "e", [("AKindWithAVeryLongNameIndeed", [[]])]))
    assert len(_table_columns(folder.stdout.decode())) == 1, folder.stdout.decode()


# ---------------------------------------------------------------------------
# Messages: the log named, as typed, the same way everywhere
# ---------------------------------------------------------------------------


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="no /dev/full")
def test_write_to_a_full_device_names_it() -> None:
    got = run("write", "/dev/full", input=b"a\nb\n")
    assert got.returncode == 2
    assert got.stderr.decode().strip() == "leveldb-log: cannot access '/dev/full': " + os.strerror(
        28
    )


def test_write_names_the_log_as_typed(tmp_path: pathlib.Path) -> None:
    (tmp_path / "folder").mkdir()
    for typed in ("missing/x.log", "folder", "./folder/../missing/y.log"):
        got = run("write", typed, input=b"a\n", cwd=tmp_path)
        assert got.returncode == 2
        assert f"'{typed}'" in got.stderr.decode(), got.stderr
        assert str(tmp_path) not in got.stderr.decode()


def test_a_name_that_is_not_utf8_is_escaped_the_same_way_everywhere(
    tmp_path: pathlib.Path,
) -> None:
    """Raw bytes of a name could be a terminal's escape sequence: every message writes a
    byte that is not UTF-8 as \\xNN and a control character escaped."""
    name = os.fsdecode(b"\xff\x1b[31m.log")
    (tmp_path / name).write_bytes(model.encode([b"a"])[0])
    ok = run("verify", name, cwd=tmp_path)
    assert ok.stdout == b"\\xff\\x1b[31m.log: OK: 1 records\n"
    missing = run("cat", os.fsdecode(b"\xfe.log"), cwd=tmp_path)
    assert missing.stderr == b"leveldb-log: cannot access '\\xfe.log': No such file or directory\n"
    (tmp_path / name).write_bytes(b"no log at all, just text\n" * 10)
    not_a_log = run("dump", name, cwd=tmp_path)
    assert b"\\xff\\x1b[31m.log: not a log?" in not_a_log.stderr
    assert b"\xff" not in not_a_log.stderr + ok.stdout + missing.stderr


def test_write_help_and_docs_say_a_hard_link_keeps_the_old_log() -> None:
    """write replaces LOG by a rename: a hard link to it still sees the old log."""
    assert "hard link" in " ".join(run("write", "--help").stdout.decode().split())
    readme = (pathlib.Path(__file__).parents[2] / "README.md").read_text()
    assert "a hard link to LOG keeps the old log" in " ".join(readme.split())


def test_write_replaces_by_rename_so_a_hard_link_keeps_the_old_log(
    tmp_path: pathlib.Path,
) -> None:
    """What the docs say of hard links, as it happens."""
    log = tmp_path / "a.log"
    assert run("write", log, input=b"old\n").returncode == 0
    os.link(log, tmp_path / "link.log")
    assert run("write", log, input=b"new\n").returncode == 0
    assert list(leveldb_log.Reader(log)) == [b"new"]
    assert list(leveldb_log.Reader(tmp_path / "link.log")) == [b"old"]


# ---------------------------------------------------------------------------
# Progress bars
# ---------------------------------------------------------------------------


def test_progress_without_tqdm_is_an_error_naming_the_extra(tmp_path: pathlib.Path) -> None:
    log = tmp_path / "a.log"
    log.write_bytes(model.encode([b"a"])[0])
    hide = tmp_path / "no_tqdm" / "tqdm"
    hide.mkdir(parents=True)
    (hide / "__init__.py").write_text("raise ImportError('tqdm hidden by the test')\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(hide.parent), *sys.path])}
    for command in (["verify"], ["dump"], ["cat"], ["stats"]):
        got = subprocess.run(
            [sys.executable, "-m", "leveldb_log", *command, "--progress", str(log)],
            capture_output=True,
            env=env,
            timeout=120,
            check=False,
        )
        assert got.returncode == 2, (command, got.stderr)
        assert b"pip install 'leveldb-log[progress]'" in got.stderr
        assert b"Traceback" not in got.stderr
    # without --progress, no tqdm is no error
    quiet = subprocess.run(
        [sys.executable, "-m", "leveldb_log", "verify", str(log)],
        capture_output=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert quiet.returncode == 0 and quiet.stderr == b""


@pytest.fixture(scope="module")
def big_log(tmp_path_factory: pytest.TempPathFactory) -> pathlib.Path:
    """A log just over the size from which a bar shows by default."""
    path = tmp_path_factory.mktemp("progress") / "big.log"
    record = b"x" * 60_000
    with leveldb_log.Writer(path) as w:
        w.write_many(record for _ in range(_progress.THRESHOLD // len(record) + 1))
    assert path.stat().st_size >= _progress.THRESHOLD
    return path


def _on_terminal(
    args: list[str | os.PathLike[str]], stdin: pathlib.Path | None = None
) -> tuple[int, bytes]:
    """Run the CLI with standard error on a pseudo-terminal (standard output to /dev/null);
    its exit status and what it wrote on the terminal."""
    controller, terminal = pty.openpty()
    # A new pseudo-terminal has 0 columns, where tqdm draws nothing: make it 80 x 24.
    fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 80, 0, 0))
    with open(stdin or os.devnull, "rb") as source:
        proc = subprocess.Popen(
            [sys.executable, "-m", "leveldb_log", *map(str, args)],
            stdin=source,
            stdout=subprocess.DEVNULL,
            stderr=terminal,
        )
    os.close(terminal)
    chunks = []
    while select.select([controller], [], [], 60)[0]:
        try:
            chunk = os.read(controller, 65536)
        except OSError:  # EIO: the terminal's other side was closed
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(controller)
    return proc.wait(timeout=60), b"".join(chunks)


LONG_COMMANDS = ["dump", "cat", "verify", "stats", "write --append", "write"]


def _long_run(
    command: str, big_log: pathlib.Path, tmp_path: pathlib.Path
) -> tuple[list[str | os.PathLike[str]], pathlib.Path | None]:
    """The arguments and standard input of ``command`` over an input of at least the size
    from which a bar shows by default."""
    words: list[str | os.PathLike[str]] = list(command.split())
    if not command.startswith("write"):
        return [*words, big_log], None
    stdin = tmp_path / "records.txt"  # input as big as the log: the bar follows it
    stdin.write_bytes(b"z" * 999 + b"\n")
    with open(stdin, "ab") as f:
        f.truncate(_progress.THRESHOLD + 1000)
    return [*words, tmp_path / "out.log"], stdin


@pytest.mark.parametrize("command", LONG_COMMANDS)
def test_every_long_command_shows_progress_on_a_terminal_unless_turned_off(
    command: str, big_log: pathlib.Path, tmp_path: pathlib.Path
) -> None:
    pytest.importorskip("tqdm")
    words, stdin = _long_run(command, big_log, tmp_path)
    status, shown = _on_terminal(words, stdin)
    assert status == 0 and b"B/s" in shown, shown
    status, shown = _on_terminal([*words, "--no-progress"], stdin)
    assert status == 0 and shown == b"", shown


@pytest.mark.parametrize("command", ["dump", "write"])  # Progress's one rule, for both kinds
def test_a_long_command_shows_no_progress_when_standard_error_is_no_terminal(
    command: str, big_log: pathlib.Path, tmp_path: pathlib.Path
) -> None:
    pytest.importorskip("tqdm")
    words, stdin = _long_run(command, big_log, tmp_path)
    with open(stdin or os.devnull, "rb") as source:
        piped = subprocess.run(
            [sys.executable, "-m", "leveldb_log", *map(str, words)],
            stdin=source,
            capture_output=True,
            timeout=120,
            check=False,
        )
    assert piped.returncode == 0 and piped.stderr == b""


def test_small_inputs_show_no_bar_on_a_terminal(tmp_path: pathlib.Path) -> None:
    pytest.importorskip("tqdm")
    log = tmp_path / "small.log"
    log.write_bytes(model.encode([b"a"] * 100)[0])
    for command in ("dump", "cat", "verify", "stats"):
        assert _on_terminal([command, log]) == (0, b"")
