"""One verdict everywhere: the table of docs/recovery.md ("One verdict, every tool"),
checked cell by cell. Each tool's answer is read off what it does (what it returns, warns,
raises, prints and exits with) and must be the verdict the table gives for that file."""

from __future__ import annotations

import json
import pathlib
import re
import warnings
from collections.abc import Callable

import leveldb_log
import pytest
from leveldb_log import Corruption, CorruptionError, CorruptionWarning, TruncatedRecordError
from support import model
from support.cli import run_cli_asserting_no_traceback

DOC = pathlib.Path(__file__).resolve().parents[2] / "docs" / "recovery.md"
NOT_A_LOG_REASON = "a torn tail no writer leaves (not a log?)"


def the_table() -> tuple[list[str], dict[str, list[str]]]:
    """(the tools, {file: the verdicts}) of the docs' table."""
    text = DOC.read_text()
    block = text.split("<!-- verdicts -->\n", 1)[1].split("<!-- /verdicts -->", 1)[0]
    rows = [[cell.strip() for cell in line.strip("|").split("|")] for line in block.splitlines()]
    header, _, *body = rows
    return header[1:], {row[0]: row[1:] for row in body}


RECORDS = [b"first record", b"x" * 5000, b"third", b"y" * 40_000, b"last " * 300]


def a_log() -> bytes:
    return model.encode(RECORDS)[0]


def the_file(kind: str) -> bytes:
    """The bytes of each file of the table."""
    log, offsets = model.encode(RECORDS)
    if kind == "a log":
        return log
    if kind == "100,000 zero bytes":
        return bytes(100_000)
    if kind == "records, then zero fill":
        return log + bytes(2 * 32768 - len(log) % 32768 + 1000)
    if kind == "records, the last one torn":
        return log[:-200]
    if kind == "a flipped bit mid-file":
        damaged = bytearray(log)
        damaged[offsets[1] + 100] ^= 0x10  # inside the second record's payload
        return bytes(damaged)
    if kind == "a length past the end, records after it":
        small, at = model.encode([b"a" * 10, b"b" * 20, b"c" * 30, b"d" * 40])
        damaged = bytearray(small)
        damaged[at[1] + 5] ^= 0x10  # the second record's length, + 4096: past the end
        return bytes(damaged)
    if kind == "a text file":
        return b"shopping: eggs, milk\n" * 40
    raise ValueError(f"no file of kind {kind!r}")


def reader(mode: str) -> Callable[[pathlib.Path], str]:
    def judge(path: pathlib.Path) -> str:
        heard: list[Corruption] = []
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            r = leveldb_log.Reader(path, recovery=mode, on_corruption=heard.append)
            try:
                list(r)
                raised: Exception | None = None
            except CorruptionError as e:
                raised = e
        warned = [str(w.message) for w in caught if issubclass(w.category, CorruptionWarning)]
        if warned:  # one warning, which says so
            return "not a log" if len(warned) == 1 and "not a log?" in warned[0] else str(warned)
        if isinstance(raised, TruncatedRecordError):  # raised in absolute mode only
            return "torn tail" if mode == "absolute" else f"torn tail raised in {mode} mode"
        if heard or raised:
            return "damage"
        return "log"

    return judge


def with_exit_status(verdict: str, status: int, said: str) -> str:
    """The verdict, or, when the exit status is not the one it calls for (1 for damage and
    for not a log, else 0), a verdict that says so and matches no row of the table."""
    if status == (1 if verdict in ("damage", "not a log") else 0):
        return verdict
    return f"{verdict} with exit status {status}: {said!r}"


def verify(path: pathlib.Path) -> str:
    result = run_cli_asserting_no_traceback("verify", path)
    out = result.stdout.decode()
    verdict = (
        "not a log"
        if "NOT A LOG" in out
        else "damage"
        if "CORRUPT" in out
        else "torn tail"
        if "note: the log ends in a torn tail" in out
        else "zeros"
        if "zero fill (preallocated space)" in out
        else "log"
    )
    return with_exit_status(verdict, result.returncode, out)


def stats(path: pathlib.Path) -> str:
    result = run_cli_asserting_no_traceback("stats", "--json", path)
    figures = json.loads(result.stdout)
    err = result.stderr.decode()
    if "not a log?" in err:
        verdict = "not a log"
    elif figures["corruptions"] or figures["garbage_bytes"] or figures["bad_checksums"]:
        verdict = "damage"
    elif figures["torn_tail_bytes"]:
        verdict = "torn tail"
    else:
        verdict = "zeros" if figures["zero_bytes"] else "log"
    return with_exit_status(verdict, result.returncode, err)


def scan(path: pathlib.Path) -> str:
    regions = list(leveldb_log.scan(path))
    last = regions[-1]
    if last.kind == "truncated" and last.reason == NOT_A_LOG_REASON:
        return "not a log"
    if any(r.kind == "garbage" or r.checksum_ok is False for r in regions):
        return "damage"
    return {"truncated": "torn tail", "zero": "zeros"}.get(last.kind, "log")


def command(name: str) -> Callable[[pathlib.Path], str]:
    def judge(path: pathlib.Path) -> str:
        result = run_cli_asserting_no_traceback(name, path)
        err = result.stderr.decode()
        if result.returncode == 0:
            return "log" if err == "" else f"log, yet it said {err!r}"
        if result.returncode != 1:
            return f"exit status {result.returncode}: {err!r}"
        if re.fullmatch(r"leveldb-log: \S+: not a log\? .*\n", err):
            return "not a log"
        return "damage" if "corruption at offset" in err else f"unexplained failure: {err!r}"

    return judge


# Each column of the table, as the tools it stands for.
TOOLS: dict[str, list[tuple[str, Callable[[pathlib.Path], str]]]] = {
    "`Reader`: skip, tolerate_tail, point_in_time": [
        (f"Reader {m}", reader(m)) for m in ("skip", "tolerate_tail", "point_in_time")
    ],
    "`Reader`: absolute": [("Reader absolute", reader("absolute"))],
    "`verify`": [("verify", verify)],
    "`stats`": [("stats", stats)],
    "`scan()`": [("scan", scan)],
    "`dump`, `cat`": [("dump", command("dump")), ("cat", command("cat"))],
}

COLUMNS, ROWS = the_table()
CASES = [
    pytest.param(kind, tool, judge, verdict, id=f"{kind} | {tool}")
    for kind, verdicts in ROWS.items()
    for column, verdict in zip(COLUMNS, verdicts, strict=True)
    for tool, judge in TOOLS[column]
]


def test_the_table_covers_every_kind_of_file_and_every_tool() -> None:
    assert list(TOOLS) == COLUMNS
    assert set(v for row in ROWS.values() for v in row) == {
        "log",
        "zeros",
        "torn tail",
        "damage",
        "not a log",
    }
    assert len(CASES) == 7 * 9


@pytest.mark.parametrize(("kind", "tool", "judge", "verdict"), CASES)
def test_every_tool_gives_the_tables_verdict(
    tmp_path: pathlib.Path,
    kind: str,
    tool: str,
    judge: Callable[[pathlib.Path], str],
    verdict: str,
) -> None:
    path = tmp_path / "file.log"
    path.write_bytes(the_file(kind))
    assert judge(path) == verdict


@pytest.mark.parametrize("name", ["verify", "stats", "dump", "cat"])
def test_a_text_file_on_standard_input_is_not_a_log_either(name: str) -> None:
    # verify's own end-of-file check needs a file; the Reader's warning does not.
    result = run_cli_asserting_no_traceback(name, "-", input=the_file("a text file"))
    assert result.returncode == 1
    said = (result.stdout + result.stderr).decode()
    assert "not a log?" in said and "OK" not in said


def test_verify_in_another_dialect_tells_a_text_file_from_a_log(tmp_path: pathlib.Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_bytes(the_file("a text file"))
    result = run_cli_asserting_no_traceback("verify", "--dialect", "rocksdb", path)
    assert result.returncode == 1
    # The end-of-file rule of mode "a" judges every dialect: the verdict is LevelDB's.
    leveldb = run_cli_asserting_no_traceback("verify", "--dialect", "leveldb", path)
    assert result.stdout == leveldb.stdout
    assert "NOT A LOG: no valid record" in result.stdout.decode()
