"""The command line, run as users run it: ``python -m leveldb_log ...`` in a subprocess, on
real files (clean, corrupt, torn, written by LevelDB), standard input, and closed pipes."""

from __future__ import annotations

import base64
import json
import pathlib
import subprocess
import sys
from collections.abc import Sequence

import leveldb_log
import pytest
from support import model
from support.cli import run_cli_asserting_no_traceback
from support.warned import READS_DAMAGE

B = leveldb_log.BLOCK_SIZE
H = leveldb_log.HEADER_SIZE


run = run_cli_asserting_no_traceback


def lines(result: subprocess.CompletedProcess[bytes]) -> list[str]:
    return result.stdout.decode().splitlines()


RECORDS = [b"hello", b"", b"tab\there", b"back\\slash", b"\x00\xff binary", b"x" * 40000]


@pytest.fixture(scope="module")
def logs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, pathlib.Path]:
    """clean.log (RECORDS), corrupt.log (a flipped byte in the 2nd block), torn.log."""
    d = tmp_path_factory.mktemp("cli")
    clean, _ = model.encode(RECORDS + [b"after %d" % i for i in range(5000)])
    corrupt = bytearray(clean)
    corrupt[B + 100] ^= 0x10
    paths = {"clean": d / "clean.log", "corrupt": d / "corrupt.log", "torn": d / "torn.log"}
    paths["clean"].write_bytes(clean)
    paths["corrupt"].write_bytes(bytes(corrupt))
    paths["torn"].write_bytes(clean[:-3])
    return paths


# ---------------------------------------------------------------------------
# help and usage
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("command", ["dump", "cat", "verify", "stats", "write", "split"])
def test_every_subcommand_has_help(command: str) -> None:
    result = run(command, "--help")
    assert result.returncode == 0
    assert result.stdout.decode().startswith(f"usage: leveldb-log {command}")


def test_usage_errors_exit_2_with_a_message_and_no_traceback(tmp_path: pathlib.Path) -> None:
    for args in (
        [],
        ["frobnicate"],
        ["dump"],
        ["dump", "--format", "xml", "x.log"],
        ["split", "x.log"],
        ["split", "-n", "2", "--size", "10", "x.log"],
        ["split", "-n", "0", "x.log"],
        ["cat", "--start", "ten", "x.log"],
        ["cat", "--length-prefixed", "--delimiter", "nul", "x.log"],
    ):
        result = run(*args)
        assert result.returncode == 2, args
        assert b"usage: leveldb-log" in result.stderr, args


def test_a_missing_file_exits_2_with_its_name(tmp_path: pathlib.Path) -> None:
    for command in ("dump", "cat", "verify", "stats", "split"):
        args = [command, tmp_path / "missing.log"] + (["-n", "2"] if command == "split" else [])
        result = run(*args)
        assert result.returncode == 2, command
        assert result.stdout == b""
        assert b"missing.log" in result.stderr and b"No such file" in result.stderr


def test_a_directory_exits_2_with_its_name(tmp_path: pathlib.Path) -> None:
    """A folder is read as a database's logs (tests/cli/test_database_folders.py): one with
    no CURRENT is no database."""
    for command in ("dump", "cat", "verify", "stats"):
        result = run(command, tmp_path)
        assert result.returncode == 2, command
        assert (
            result.stderr.decode()
            == f"leveldb-log: not a database: no CURRENT in {str(tmp_path)!r}\n"
        )


def test_end_before_start_is_a_usage_error(logs: dict[str, pathlib.Path]) -> None:
    result = run("dump", "--start", "100", "--end", "50", logs["clean"])
    assert result.returncode == 2
    assert b"--end 50 is before --start 100" in result.stderr


def test_the_console_script_entry_point_returns_the_status(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from leveldb_log.__main__ import main

    assert main(["split", "--help"]) == 0
    assert "usage: leveldb-log split" in capsys.readouterr().out
    assert main(["split"]) == 2


# ---------------------------------------------------------------------------
# dump
# ---------------------------------------------------------------------------


def test_dump_text_escapes_payloads(logs: dict[str, pathlib.Path]) -> None:
    result = run("dump", logs["clean"])
    assert result.returncode == 0 and result.stderr == b""
    out = lines(result)
    assert out[:5] == [
        "0\t5\thello",
        "12\t0\t",
        "19\t8\ttab\\x09here",
        "34\t10\tback\\\\slash",
        "51\t9\t\\x00\\xff binary",
    ]
    assert out[5] == "67\t40000\t" + "x" * 40000
    assert len(out) == len(RECORDS) + 5000


def test_dump_hex_base64_and_json(logs: dict[str, pathlib.Path]) -> None:
    hex_out = lines(run("dump", "--format", "hex", logs["clean"]))
    assert hex_out[0] == "0\t5\t68656c6c6f" and hex_out[4] == "51\t9\t00ff2062696e617279"
    b64 = lines(run("dump", "--format", "base64", logs["clean"]))
    assert b64[4] == "51\t9\t" + base64.b64encode(RECORDS[4]).decode()
    js = [json.loads(line) for line in lines(run("dump", "--format", "json", logs["clean"]))]
    assert js[0] == {"offset": 0, "length": 5, "data": "hello"}
    assert js[2]["data"] == "tab\there"
    assert js[4] == {
        "offset": 51,
        "length": 9,
        "data": {"base64": base64.b64encode(RECORDS[4]).decode()},
    }


def test_dump_reads_standard_input(logs: dict[str, pathlib.Path]) -> None:
    from_file = run("dump", logs["clean"])
    from_stdin = run("dump", "-", input=logs["clean"].read_bytes())
    assert from_stdin.returncode == 0
    assert from_stdin.stdout == from_file.stdout


def test_dump_start_end_select_records_by_first_header(logs: dict[str, pathlib.Path]) -> None:
    out = lines(run("dump", "--start", "13", "--end", "0x33", logs["clean"]))
    assert [line.split("\t")[0] for line in out] == ["19", "34"]
    tail = lines(run("dump", "--start", "64k", logs["clean"]))
    assert int(tail[0].split("\t")[0]) >= 65536


@READS_DAMAGE
def test_dump_of_a_corrupt_log_reports_to_stderr_and_exits_1(
    logs: dict[str, pathlib.Path],
) -> None:
    result = run("dump", logs["corrupt"])
    assert result.returncode == 1
    with leveldb_log.Reader(logs["corrupt"]) as r:
        expected = len(list(r))
    assert len(lines(result)) == expected
    assert b"leveldb-log: corruption at offset " in result.stderr
    assert b"checksum mismatch" in result.stderr


@pytest.mark.parametrize(
    ("recovery", "status", "records"),
    [
        ("skip", 0, 5005),
        ("tolerate_tail", 0, 5005),
        ("point_in_time", 0, 5005),
        ("absolute", 1, 5005),
    ],
)
def test_dump_recovery_modes_on_a_torn_tail(
    logs: dict[str, pathlib.Path], recovery: str, status: int, records: int
) -> None:
    result = run("dump", "--recovery", recovery, logs["torn"])
    assert result.returncode == status
    assert len(lines(result)) == records
    if status:
        assert b"truncated payload at end of file" in result.stderr


def test_dump_without_checksums_shows_the_damaged_record(logs: dict[str, pathlib.Path]) -> None:
    result = run("dump", "--no-verify-checksums", logs["corrupt"])
    assert result.returncode == 0
    assert len(lines(result)) == len(RECORDS) + 5000


# ---------------------------------------------------------------------------
# dump --leveldb on a database written by LevelDB
# ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def leveldb_dir(tmp_path_factory: pytest.TempPathFactory) -> pathlib.Path:
    plyvel = pytest.importorskip("plyvel")
    d = tmp_path_factory.mktemp("db")
    db = plyvel.DB(str(d), create_if_missing=True, write_buffer_size=64 << 20)
    db.put(b"k1", b"v1")
    db.put(b"quote'd", b"\x00\x01")
    db.delete(b"k1")
    with db.write_batch() as wb:
        wb.put(b"a", b"1")
        wb.delete(b"b")
    db.close()
    return d


def test_dump_leveldb_wal_like_leveldbutil(leveldb_dir: pathlib.Path) -> None:
    result = run("dump", "--leveldb", leveldb_dir / "000003.log")
    assert result.returncode == 0, result.stderr
    assert lines(result) == [
        "--- offset 0; sequence 1",
        "  put 'k1' 'v1'",
        "--- offset 26; sequence 2",
        "  put 'quote\\x27d' '\\x00\\x01'",
        "--- offset 57; sequence 3",
        "  del 'k1'",
        "--- offset 80; sequence 4",
        "  put 'a' '1'",
        "  del 'b'",
    ]


def test_dump_leveldb_json(leveldb_dir: pathlib.Path) -> None:
    result = run("dump", "--leveldb", "--format", "json", leveldb_dir / "000003.log")
    batches = [json.loads(line) for line in lines(result)]
    assert batches[3] == {
        "offset": 80,
        "sequence": 4,
        "count": 2,
        "ops": [{"op": "put", "key": "a", "value": "1"}, {"op": "delete", "key": "b"}],
    }


def test_dump_leveldb_manifest(leveldb_dir: pathlib.Path) -> None:
    manifest = leveldb_dir / "MANIFEST-000002"
    result = run("dump", "--leveldb", manifest)
    assert result.returncode == 0, result.stderr
    text = result.stdout.decode()
    assert "--- offset 0; VersionEdit {\n  Comparator: leveldb.BytewiseComparator\n}" in text
    assert "  LogNumber: 3\n" in text and "  NextFile: 4\n" in text
    edits = [
        json.loads(line) for line in lines(run("dump", "--leveldb", "--format", "json", manifest))
    ]
    assert edits[0] == {"offset": 0, "comparator": "leveldb.BytewiseComparator"}
    assert edits[1]["log_number"] == 3


def test_dump_leveldb_kind_from_the_name_or_the_option(
    leveldb_dir: pathlib.Path, tmp_path: pathlib.Path
) -> None:
    copy = tmp_path / "wal.bin"
    copy.write_bytes((leveldb_dir / "000003.log").read_bytes())
    refused = run("dump", "--leveldb", copy)
    assert refused.returncode == 2 and b"--kind" in refused.stderr
    assert run("dump", "--leveldb", "--kind", "wal", copy).stdout.startswith(b"--- offset 0;")
    from_stdin = run("dump", "--leveldb", "--kind", "wal", "-", input=copy.read_bytes())
    assert from_stdin.returncode == 0 and len(lines(from_stdin)) == 9


def test_dump_leveldb_reports_payloads_that_do_not_decode(logs: dict[str, pathlib.Path]) -> None:
    result = run("dump", "--leveldb", "--kind", "manifest", "--end", "1", logs["clean"])
    assert result.returncode == 1
    assert result.stderr.decode() == (
        "leveldb-log: record at offset 0: VersionEdit: unknown tag 104 at byte 0\n"
    )
    result = run("dump", "--leveldb", "--kind", "wal", "--end", "1", logs["clean"])
    assert result.returncode == 1
    assert b"WriteBatch: 5 bytes is shorter than the 12-byte header" in result.stderr


# ---------------------------------------------------------------------------
# cat and write
# ---------------------------------------------------------------------------


def test_cat_writes_raw_payloads_one_per_line(logs: dict[str, pathlib.Path]) -> None:
    result = run("cat", logs["clean"])
    assert result.returncode == 0
    expected = RECORDS + [b"after %d" % i for i in range(5000)]
    assert result.stdout == b"".join(r + b"\n" for r in expected)
    assert run("cat", "--delimiter", "nul", "--end", "1", logs["clean"]).stdout == b"hello\0"
    assert run("cat", "--delimiter", "none", "--end", "13", logs["clean"]).stdout == b"hello"


def test_cat_length_prefixed_round_trips_through_write(
    logs: dict[str, pathlib.Path], tmp_path: pathlib.Path
) -> None:
    framed = run("cat", "--length-prefixed", logs["clean"]).stdout
    assert framed[:9] == b"\x05\x00\x00\x00hello"
    out = tmp_path / "copy.log"
    assert run("write", "--length-prefixed", out, input=framed).returncode == 0
    assert out.read_bytes() == logs["clean"].read_bytes()


def test_write_lines_from_stdin(tmp_path: pathlib.Path) -> None:
    out = tmp_path / "w.log"
    result = run("write", out, input=b"one\ntwo\n\nthree")
    assert result.returncode == 0 and result.stdout == b""
    assert list(leveldb_log.Reader(out)) == [b"one", b"two", b"", b"three"]
    assert run("write", out, input=b"").returncode == 0
    assert out.read_bytes() == b""


def test_write_jsonl(tmp_path: pathlib.Path) -> None:
    out = tmp_path / "j.log"
    text = '"plain"\n"caf\\u00e9"\n\n{"base64": "AP8="}\n""\n'
    assert run("write", "--format", "jsonl", out, input=text.encode()).returncode == 0
    assert list(leveldb_log.Reader(out)) == [b"plain", "café".encode(), b"\x00\xff", b""]


def test_dump_json_data_round_trips_through_write_jsonl(
    logs: dict[str, pathlib.Path], tmp_path: pathlib.Path
) -> None:
    dumped = run("dump", "--format", "json", logs["clean"]).stdout.decode().splitlines()
    jsonl = "".join(json.dumps(json.loads(line)["data"]) + "\n" for line in dumped)
    out = tmp_path / "again.log"
    assert run("write", "--format", "jsonl", out, input=jsonl.encode()).returncode == 0
    assert out.read_bytes() == logs["clean"].read_bytes()


@pytest.mark.parametrize(
    ("fmt", "data", "message"),
    [
        ("jsonl", b'"ok"\n{"nope": 1}\n', b"input line 2: expected a JSON string"),
        ("jsonl", b"not json\n", b"input line 1: Expecting value"),
        ("jsonl", b'{"base64": "***"}\n', b"input line 1:"),
        ("length-prefixed", b"\x05\x00\x00\x00abc", b"input ends inside a record: 3 of 5 bytes"),
        ("length-prefixed", b"\x05\x00", b"input ends inside a 4-byte length prefix"),
    ],
)
def test_write_refuses_malformed_input(
    tmp_path: pathlib.Path, fmt: str, data: bytes, message: bytes
) -> None:
    result = run("write", "--format", fmt, tmp_path / "bad.log", input=data)
    assert result.returncode == 2
    assert message in result.stderr


def test_write_append_cuts_a_torn_tail_first(
    logs: dict[str, pathlib.Path], tmp_path: pathlib.Path
) -> None:
    log = tmp_path / "torn.log"
    log.write_bytes(logs["torn"].read_bytes())
    assert run("write", "--append", log, input=b"new\n").returncode == 0
    records = list(leveldb_log.Reader(log, recovery="absolute"))
    assert records[-2:] == [b"after 4998", b"new"]
    assert run("write", "--append", "-", input=b"x").returncode == 2


def test_write_to_stdout_pipes_into_dump_from_stdin() -> None:
    log = run("write", "--input", "-", "-", input=b"a\nb\n").stdout
    assert log == model.encode([b"a", b"b"])[0]
    assert lines(run("dump", "-", input=log)) == ["0\t1\ta", "8\t1\tb"]


def test_write_to_stdout_refuses_appending_redirection(tmp_path: pathlib.Path) -> None:
    log = tmp_path / "old.log"
    log.write_bytes(model.encode([b"old"])[0])
    with open(log, "ab") as out:  # like `leveldb-log write - >> old.log`
        result = subprocess.run(
            [sys.executable, "-m", "leveldb_log", "write", "-"],
            input=b"new\n",
            stdout=out,
            stderr=subprocess.PIPE,
            check=False,
        )
    assert result.returncode == 2
    assert b"give its name and --append" in result.stderr
    assert list(leveldb_log.Reader(log, recovery="absolute")) == [b"old"]


def test_write_input_file(tmp_path: pathlib.Path) -> None:
    source = tmp_path / "in.txt"
    source.write_bytes(b"x\ny\n")
    out = tmp_path / "out.log"
    assert run("write", "-i", source, out).returncode == 0
    assert list(leveldb_log.Reader(out)) == [b"x", b"y"]


# ---------------------------------------------------------------------------
# verify
# ---------------------------------------------------------------------------


def test_verify_a_clean_log(logs: dict[str, pathlib.Path]) -> None:
    result = run("verify", logs["clean"])
    assert result.returncode == 0 and result.stderr == b""
    assert lines(result) == [f"{logs['clean']}: OK: 5006 records"]


def test_verify_lists_every_corruption_with_offset_size_and_reason(
    logs: dict[str, pathlib.Path],
) -> None:
    seen: list[leveldb_log.Corruption] = []
    with leveldb_log.Reader(logs["corrupt"], on_corruption=seen.append) as r:
        n = len(list(r))
    result = run("verify", logs["corrupt"])
    assert result.returncode == 1
    assert lines(result) == [
        *(f"corruption at offset {c.offset}: {c.reason} ({c.size} bytes dropped)" for c in seen),
        f"{logs['corrupt']}: CORRUPT: {len(seen)} corruption(s), "
        f"{sum(c.size for c in seen)} bytes dropped, {n} records read",
    ]
    quiet = run("verify", "-q", logs["corrupt"])
    assert quiet.returncode == 1 and quiet.stdout == b""


def test_verify_notes_a_torn_tail_and_refuses_it_in_absolute_mode(
    logs: dict[str, pathlib.Path],
) -> None:
    size = logs["torn"].stat().st_size
    result = run("verify", logs["torn"])
    assert result.returncode == 0
    with leveldb_log.Reader(logs["torn"]) as r:
        list(r)
        torn_at = r.position
    assert torn_at is not None
    assert lines(result)[0] == (
        f"note: the log ends in a torn tail at offset {torn_at} ({size - torn_at} bytes)"
    )
    strict = run("verify", "--recovery", "absolute", logs["torn"])
    assert strict.returncode == 1
    assert "truncated payload at end of file" in lines(strict)[0]


def test_verify_from_stdin(logs: dict[str, pathlib.Path]) -> None:
    result = run("verify", "-", input=logs["corrupt"].read_bytes())
    assert result.returncode == 1
    assert lines(result)[-1].startswith("-: CORRUPT: ")


# ---------------------------------------------------------------------------
# stats
# ---------------------------------------------------------------------------


def test_stats_of_the_format_md_worked_example(tmp_path: pathlib.Path) -> None:
    log = tmp_path / "example.log"
    log.write_bytes(model.encode([b"a" * 1000, b"b" * 97270, b"c" * 8000])[0])
    result = run("stats", "--json", log)
    assert result.returncode == 0
    assert json.loads(result.stdout) == {
        "file_bytes": 106311,
        "records": 3,
        "record_bytes": 106270,
        "physical_records": 6 - 1,
        "header_bytes": 35,
        "fragment_types": {"FIRST": 1, "FULL": 2, "LAST": 1, "MIDDLE": 1},
        "bad_checksums": 0,
        "trailer_bytes": 6,
        "zero_bytes": 0,
        "garbage_bytes": 0,
        "torn_tail_bytes": 0,
        "dropped_bytes": 0,
        "corruptions": 0,
        "record_sizes": [
            {"min": 512, "max": 1023, "count": 1},
            {"min": 4096, "max": 8191, "count": 1},
            {"min": 65536, "max": 131071, "count": 1},
        ],
    }
    text = run("stats", log).stdout.decode()
    assert "records                      3\n" in text
    assert "trailer bytes                6\n" in text
    assert "record sizes:\n" in text


@READS_DAMAGE
def test_stats_of_a_corrupt_log_agree_with_the_reader(logs: dict[str, pathlib.Path]) -> None:
    with leveldb_log.Reader(logs["corrupt"]) as r:
        n = len(list(r))
        dropped = r.dropped_bytes
    result = run("stats", "--json", logs["corrupt"])
    assert result.returncode == 1
    stats = json.loads(result.stdout)
    assert (stats["records"], stats["dropped_bytes"], stats["bad_checksums"]) == (n, dropped, 1)
    from_stdin = run("stats", "--json", "-", input=logs["corrupt"].read_bytes())
    assert json.loads(from_stdin.stdout) == stats


# ---------------------------------------------------------------------------
# split
# ---------------------------------------------------------------------------


def test_split_prints_ranges_that_read_every_record_once(logs: dict[str, pathlib.Path]) -> None:
    size = logs["clean"].stat().st_size
    result = run("split", "-n", "2", logs["clean"])
    assert result.returncode == 0
    ranges = [tuple(map(int, line.split())) for line in lines(result)]
    assert ranges == [(0, 2 * B), (2 * B, size)]  # 4 blocks, the last one short
    by_size = run("split", "--size", "32k", logs["clean"])
    assert lines(by_size) == ["0 32768", "32768 65536", "65536 98304", f"98304 {size}"]
    pieces = [
        run("cat", "--length-prefixed", "--start", str(start), "--end", str(end), logs["clean"])
        for start, end in ranges
    ]
    assert all(p.returncode == 0 for p in pieces)
    joined = b"".join(p.stdout for p in pieces)
    assert joined == run("cat", "--length-prefixed", logs["clean"]).stdout


def test_split_of_redirected_stdin_and_of_a_pipe(logs: dict[str, pathlib.Path]) -> None:
    with open(logs["clean"], "rb") as f:
        redirected = subprocess.run(
            [sys.executable, "-m", "leveldb_log", "split", "-n", "2", "-"],
            stdin=f,
            capture_output=True,
            check=False,
        )
    assert redirected.returncode == 0
    assert redirected.stdout == run("split", "-n", "2", logs["clean"]).stdout
    piped = run("split", "-n", "2", "-", input=logs["clean"].read_bytes())
    assert piped.returncode == 2 and b"not seekable" in piped.stderr


# ---------------------------------------------------------------------------
# output closed early
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("args", [["dump"], ["cat"], ["dump", "--format", "json"]])
def test_output_closed_early_exits_quietly(
    logs: dict[str, pathlib.Path], args: Sequence[str]
) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "leveldb_log", *args, str(logs["clean"])],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    first = proc.stdout.readline()
    proc.stdout.close()  # like `| head -1`
    status = proc.wait(timeout=60)
    stderr = proc.stderr.read()
    proc.stderr.close()
    assert first
    assert stderr == b""
    assert status == 1


def test_output_closed_early_in_a_shell_pipeline(logs: dict[str, pathlib.Path]) -> None:
    result = subprocess.run(
        f'"{sys.executable}" -m leveldb_log dump "{logs["clean"]}" | head -1',
        shell=True,
        capture_output=True,
        check=False,
    )
    assert result.returncode == 0
    assert result.stdout == b"0\t5\thello\n"
    assert result.stderr == b""
