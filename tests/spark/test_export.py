"""format("datastore_export") on the real exports in ../shared/datastore_exports: the rows
and column types Export.to_arrow() gives, one row per entity, and the kinds option."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from leveldb_log.datastore import read_export
from support.paths import EXPORTS

pytestmark = pytest.mark.slow

needs_exports = pytest.mark.skipif(not EXPORTS.is_dir(), reason="no ../shared/datastore_exports")


def export_path(name: str) -> Path:
    """rad_mentor has no overall metadata: its per-kind metadata file names it."""
    if name == "rad_mentor":
        return next((EXPORTS / name).glob("all_namespaces/*/*.export_metadata"))
    return EXPORTS / name


def assert_same_table(got: Any, expected: Any) -> None:
    """Spark's rows are to_arrow()'s: the same property columns, in the same order, with
    the same values, and each entity's kind beside its key."""
    assert got.schema.names == ["__key__", "__kind__", *expected.schema.names[1:]]
    for field in expected.schema:
        assert got.column(field.name).to_pylist() == expected.column(field.name).to_pylist()
    kinds = [key["kind"] for key in expected.column("__key__").to_pylist()]
    assert got.column("__kind__").to_pylist() == kinds


@needs_exports
@pytest.mark.parametrize("name", ["Statera", "next_swapi", "rad_mentor", "EveryBoard"])
def test_real_exports_read_as_to_arrow_reads_them(spark: Any, name: str) -> None:
    path = str(export_path(name))
    expected = read_export(path).to_arrow()
    assert expected.num_rows > 0
    got = spark.read.format("datastore_export").load(path).toArrow()
    assert_same_table(got, expected)


@needs_exports
def test_json_columns_stay_json_in_every_partition(spark: Any) -> None:
    path = str(export_path("elewa"))
    expected = read_export(path).to_arrow()
    json_columns = [f.name for f in expected.schema if f.metadata]
    assert json_columns  # elewa has properties of mixed types
    df = spark.read.format("datastore_export").option("maxPartitionBytes", str(1 << 20)).load(path)
    assert df.rdd.getNumPartitions() > 1
    assert_same_table(df.toArrow(), expected)
    assert {f.name: f.metadata for f in df.schema if f.metadata} == {
        name: {"leveldb_log.datastore": "json"} for name in json_columns
    }


@needs_exports
def test_kinds_selects_entities_and_their_columns(spark: Any) -> None:
    path = str(export_path("next_swapi"))
    kinds = sorted({k["kind"] for k in read_export(path).to_arrow()["__key__"].to_pylist()})
    assert len(kinds) > 2
    chosen = kinds[:2]
    expected = read_export(path, kinds=chosen).to_arrow()
    for option in (",".join(chosen), f'["{chosen[0]}", "{chosen[1]}"]'):
        df = spark.read.format("datastore_export").option("kinds", option).load(path)
        assert_same_table(df.toArrow(), expected)


@needs_exports
def test_an_empty_export_has_no_rows(spark: Any) -> None:
    path = str(export_path("EveryBoard-empty"))
    df = spark.read.format("datastore_export").load(path)
    assert df.columns == ["__key__", "__kind__"] and df.count() == 0


def test_one_export_at_a_time(spark: Any, tmp_path: Path) -> None:
    with pytest.raises(Exception, match="datastore_export reads one export"):
        spark.read.format("datastore_export").load([str(tmp_path), str(tmp_path)]).collect()


def write_output(path: Path) -> None:
    """One output file: two users (age an int, then a str) and a post in namespace "blog"."""
    import leveldb_log
    from leveldb_log.datastore import Entity, Key, encode_entity

    with leveldb_log.Writer(path, "w") as w:
        w.write(encode_entity(Entity({"name": "Ada", "age": 36}, key=Key([("users", "ada")]))))
        w.write(encode_entity(Entity({"name": "Alan", "age": "41"}, key=Key([("users", "al")]))))
        post = Key([("posts", 7)], namespace="blog")
        w.write(encode_entity(Entity({"title": "Notes"}, key=post)))


def test_a_schema_given_skips_inference_and_types_the_columns(spark: Any, tmp_path: Path) -> None:
    write_output(tmp_path / "output-0")
    df = (
        spark.read.format("datastore_export")
        .schema("__kind__ string, name string, title string")
        .load(str(tmp_path / "output-0"))
    )
    assert [tuple(r) for r in df.collect()] == [
        ("users", "Ada", None),
        ("users", "Alan", None),
        ("posts", None, "Notes"),
    ]


def test_namespaces_selects_entities(spark: Any, tmp_path: Path) -> None:
    write_output(tmp_path / "output-0")
    reader = spark.read.format("datastore_export")
    blog = reader.option("namespaces", "blog").load(str(tmp_path / "output-0"))
    assert blog.columns == ["__key__", "__kind__", "title"]
    assert [(r["__key__"]["namespace"], r["title"]) for r in blog.collect()] == [("blog", "Notes")]
    default = reader.option("namespaces", '[""]').load(str(tmp_path / "output-0"))
    assert [r["name"] for r in default.collect()] == ["Ada", "Alan"]
    assert default.schema["age"].metadata == {"leveldb_log.datastore": "json"}
    assert [r["age"] for r in default.collect()] == ["36", '"41"']
