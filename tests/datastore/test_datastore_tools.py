"""leveldb_log.datastore's exits: Arrow tables (pyarrow, polars, DuckDB), Dask bags, and the
command line's ``dump --decode`` and ``stats`` on exports."""

from __future__ import annotations

import base64
import datetime
import json
import math
import sys
from pathlib import Path
from typing import Any

import pytest
from leveldb_log import datastore as ds
from support.cli import run_cli_asserting_no_traceback
from support.datastore_build import write_export, write_log

try:
    import pyarrow as pa
except ImportError:  # in the test extra; a wheel's test run may lack it
    pa = None
needs_arrow = pytest.mark.skipif(pa is None, reason="pyarrow is not installed")
UTC = datetime.timezone.utc
KEY = ds.Key([("users", "alice"), ("posts", 7)], app="dev~demo", namespace="ns")


def people() -> list[ds.Entity]:
    """Entities whose properties cover every column type."""
    out = []
    for i in range(6):
        props: dict[str, Any] = {
            "name": f"user{i}",
            "age": i,
            "score": i + 0.5,
            "active": i % 2 == 0,
            "blob": bytes([i]),
            "when": datetime.datetime(2020, 1, 1, tzinfo=UTC) + datetime.timedelta(days=i),
            "where": ds.GeoPoint(i, -i),
            "ref": KEY,
            "number": i if i % 2 else i + 0.25,  # ints and floats: float64
            "mixed": i if i % 2 else "text",  # JSON
            "tags": ["a", i],  # JSON
            "nested": {"m": {"n": i}},  # JSON
        }
        if i == 3:
            del props["age"]  # a missing property is a null
            props["name"] = None
        out.append(ds.Entity(props, key=ds.Key([("users", f"u{i}")], app="s~proj")))
    return out


@pytest.fixture(scope="module")
def export(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("ds") / "export"
    entities = people()
    write_export(folder, [("", [entities[:4], entities[4:]])])
    return folder


@needs_arrow
def test_to_arrow_types_each_column(export: Path) -> None:
    table = ds.read_export(export).to_arrow()
    types = {f.name: f.type for f in table.schema}
    assert table.num_rows == 6
    assert types["age"] == pa.int64() and types["score"] == pa.float64()
    assert types["name"] == pa.large_string() and types["active"] == pa.bool_()
    assert types["blob"] == pa.large_binary() and types["when"] == pa.timestamp("us", tz="UTC")
    assert types["number"] == pa.float64()
    assert types["where"] == pa.struct([("latitude", pa.float64()), ("longitude", pa.float64())])
    for name in ("mixed", "tags", "nested"):
        assert types[name] == pa.large_string()
        assert table.schema.field(name).metadata == {b"leveldb_log.datastore": b"json"}
    rows = table.to_pylist()
    assert rows[3]["age"] is None and rows[3]["name"] is None and rows[2]["age"] == 2
    assert rows[1]["number"] == 1.0 and rows[0]["number"] == 0.25
    assert json.loads(rows[0]["mixed"]) == "text" and json.loads(rows[1]["mixed"]) == 1
    assert json.loads(rows[2]["tags"]) == ["a", 2]
    assert json.loads(rows[2]["nested"]) == {"m": {"n": 2}}
    assert rows[2]["when"] == datetime.datetime(2020, 1, 3, tzinfo=UTC)
    key = rows[2]["__key__"]
    assert key == {
        "project": "proj",
        "namespace": "",
        "path": [{"kind": "users", "id": None, "name": "u2"}],
        "kind": "users",
        "id": None,
        "name": "u2",
    }
    assert rows[2]["ref"]["path"][1] == {"kind": "posts", "id": 7, "name": None}
    assert rows[2]["ref"]["namespace"] == "ns" and rows[2]["where"] == {
        "latitude": 2.0,
        "longitude": -2.0,
    }


@needs_arrow
def test_big_ints_mixed_with_floats_stay_exact_as_json(tmp_path: Path) -> None:
    key = ds.Key([("k", 1)])
    records = [
        ds.encode_entity(ds.Entity({"v": (1 << 60) + 1, "f": math.nan}, key=key)),
        ds.encode_entity(ds.Entity({"v": 0.5, "f": math.inf}, key=key)),
    ]
    write_log(tmp_path / "output-0", records)
    table = ds.read_export(tmp_path / "output-0").to_arrow()
    assert [json.loads(v) for v in table.column("v").to_pylist()] == [(1 << 60) + 1, 0.5]
    floats = table.column("f").to_pylist()
    assert math.isnan(floats[0]) and floats[1] == math.inf


@needs_arrow
def test_pyarrow_polars_and_duckdb_read_an_export_through_the_c_stream(export: Path) -> None:
    table = pa.table(ds.read_export(export))
    assert table.equals(ds.read_export(export).to_arrow())
    polars = pytest.importorskip("polars")
    frame = polars.DataFrame(ds.read_export(export))
    assert frame.height == 6 and frame["age"].to_list() == [0, 1, 2, None, 4, 5]
    duckdb = pytest.importorskip("duckdb")
    export_ = ds.read_export(export)  # noqa: F841  (DuckDB finds it by name)
    got = duckdb.sql(
        "SELECT __key__.name AS id, age FROM export_ WHERE age >= 4 ORDER BY age"
    ).fetchall()
    assert got == [("u4", 4), ("u5", 5)]


@needs_arrow
def test_an_empty_export_is_an_empty_table(tmp_path: Path) -> None:
    write_log(tmp_path / "output-0", [])
    table = ds.read_export(tmp_path / "output-0").to_arrow()
    assert table.num_rows == 0 and table.column_names == ["__key__"]


def test_to_arrow_without_pyarrow_names_the_extra(
    export: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "pyarrow", None)  # import pyarrow raises ImportError
    with pytest.raises(ImportError, match=r"leveldb-log\[arrow\]"):
        ds.read_export(export).to_arrow()
    with pytest.raises(ImportError, match=r"leveldb-log\[arrow\]"):
        ds.read_export(export, kinds=["users"]).__arrow_c_stream__()


def test_dask_reads_one_partition_per_output_file_or_byte_range(
    export: Path, tmp_path: Path
) -> None:
    pytest.importorskip("dask.bag")
    import leveldb_log.dask

    bag = leveldb_log.dask.read_export(export)
    assert bag.npartitions == 2
    assert bag.compute(scheduler="sync") == people()
    big = [ds.Entity({"t": "x" * 5000}, key=ds.Key([("k", i)])) for i in range(1, 41)]
    write_export(tmp_path / "big", [("", [big])])  # 200 KB: 7 blocks
    ranged = leveldb_log.dask.read_export(tmp_path / "big", blocksize=1)
    assert ranged.npartitions == 7 and ranged.compute(scheduler="sync") == big
    kinds = leveldb_log.dask.read_export(export, kinds=["nothing"])
    assert kinds.compute(scheduler="sync") == []
    with pytest.raises(ValueError, match="blocksize"):
        leveldb_log.dask.read_export(export, blocksize=0)


def test_cli_dump_decode_prints_entities_as_json_lines(export: Path) -> None:
    result = run_cli_asserting_no_traceback("dump", "--decode", export)
    assert result.returncode == 0, result.stderr
    rows = [json.loads(line) for line in result.stdout.decode().splitlines()]
    assert len(rows) == 6
    assert rows[2]["key"] == [["users", "u2"]] and rows[2]["namespace"] == ""
    props = rows[2]["properties"]
    assert props["blob"] == base64.b64encode(b"\x02").decode()
    assert props["when"] == "2020-01-03T00:00:00.000000Z"
    assert props["ref"] == [["users", "alice"], ["posts", 7]]
    assert props["where"] == {"latitude": 2.0, "longitude": -2.0}
    one = run_cli_asserting_no_traceback(
        "dump", "--decode", export / "all_namespaces" / "all_kinds" / "output-1"
    )
    assert [json.loads(x)["key"] for x in one.stdout.decode().splitlines()] == [
        [["users", "u4"]],
        [["users", "u5"]],
    ]


def test_cli_dump_decode_reports_damage_and_bad_records(tmp_path: Path) -> None:
    key = ds.Key([("k", "a")])
    write_log(tmp_path / "output-0", [ds.encode_entity(ds.Entity({"v": 1}, key=key)), b"junk"])
    result = run_cli_asserting_no_traceback("dump", "--decode", tmp_path / "output-0")
    assert result.returncode == 1
    assert len(result.stdout.decode().splitlines()) == 1
    assert b"offset" in result.stderr and b"output-0" in result.stderr
    renamed = tmp_path / "backup.bin"
    renamed.write_bytes((tmp_path / "output-0").read_bytes()[:-11])  # the first record only
    forced = run_cli_asserting_no_traceback("dump", "--decode", "--kind", "export", renamed)
    assert forced.returncode == 0 and json.loads(forced.stdout)["properties"] == {"v": 1}


def test_cli_stats_counts_entities_per_kind(export: Path) -> None:
    result = run_cli_asserting_no_traceback("stats", "--json", export)
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == {"entities": 6, "kinds": {"users": 6}}
    text = run_cli_asserting_no_traceback("stats", export).stdout.decode().splitlines()
    assert text[0].split() == ["entities", "6"] and text[1].split() == ["users", "6"]
    one = run_cli_asserting_no_traceback(
        "stats", "--json", export / "all_namespaces" / "all_kinds" / "output-0"
    )
    figures = json.loads(one.stdout)
    assert figures["records"] == 4 and figures["entities"] == 4 and figures["kinds"] == {"users": 4}


def both_ways(path: Path | str) -> tuple[Any, Any]:
    """The table of decode_columns (no filter) and the one built from Entity objects (a
    filter naming every kind takes that path)."""
    kinds = {e.key.kind for e in ds.read_export(path)}
    return ds.read_export(path).to_arrow(), ds.read_export(path, kinds=kinds).to_arrow()


@needs_arrow
def test_the_columnar_decoder_builds_the_table_the_entities_build(export: Path) -> None:
    fast, slow = both_ways(export)
    assert fast.schema == slow.schema and fast.equals(slow)


EXPORTS = Path(__file__).resolve().parents[2].parent / "shared" / "datastore_exports"


@needs_arrow
@pytest.mark.skipif(not EXPORTS.is_dir(), reason="no ../shared/datastore_exports")
def test_the_two_table_builders_agree_on_every_real_export() -> None:
    for folder in sorted(p for p in EXPORTS.iterdir() if p.is_dir()):
        if not list(folder.glob("*.overall_export_metadata")):
            continue
        fast, slow = both_ways(folder)
        assert fast.schema == slow.schema and fast.equals(slow), folder.name
        assert fast.num_rows == len(list(ds.read_export(folder)))


@needs_arrow
def test_to_arrow_names_the_offset_of_a_bad_record(tmp_path: Path) -> None:
    key = ds.Key([("k", "a")])
    good = ds.encode_entity(ds.Entity({"v": 1}, key=key))
    write_log(tmp_path / "output-0", [good, good, b"\x08\x01"])
    with pytest.raises(ds.EntityDecodeError) as info:
        ds.read_export(tmp_path / "output-0").to_arrow()
    assert info.value.offset == 2 * (len(good) + 7)
    assert info.value.path == str(tmp_path / "output-0")
    twice = ds.encode_entity(ds.Entity({"v": 1}, key=key))
    twice += twice[twice.index(b"\x7a") :]  # the property again, not repeated
    write_log(tmp_path / "output-1", [twice])
    for how in (lambda p: list(ds.read_export(p)), lambda p: ds.read_export(p).to_arrow()):
        with pytest.raises(ds.EntityDecodeError, match="appears twice"):
            how(tmp_path / "output-1")


def test_cli_reads_an_export_folder_given_as_a_url(
    export: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fsspec = pytest.importorskip("fsspec")
    from leveldb_log.cli import main
    from support.datastore_build import files_of

    fs = fsspec.filesystem("memory")
    for rel, data in files_of(export).items():
        fs.pipe(f"/cli-ds/{rel}", data)
    try:
        assert main(["stats", "--json", "memory://cli-ds"]) == 0
        assert json.loads(capsys.readouterr().out) == {"entities": 6, "kinds": {"users": 6}}
        assert main(["dump", "--decode", "memory://cli-ds"]) == 0
        assert len(capsys.readouterr().out.splitlines()) == 6
    finally:
        fs.rm("/cli-ds", recursive=True)
