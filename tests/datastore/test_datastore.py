"""leveldb_log.datastore on real exports and on folders built like them: entity counts,
values, layout quirks, re-encoding byte for byte, damage, bad input."""

from __future__ import annotations

import datetime
import math
import re
import warnings
from pathlib import Path

import leveldb_log
import pytest
from leveldb_log import datastore as ds
from support.datastore_build import field, files_of, write_export, write_log

EXPORTS = Path(__file__).resolve().parents[2].parent / "shared" / "datastore_exports"
needs_exports = pytest.mark.skipif(not EXPORTS.is_dir(), reason="no ../shared/datastore_exports")
UTC = datetime.timezone.utc


def sources_table() -> dict[str, int]:
    """folder -> entities, from the table of SOURCES.md."""
    counts = {}
    for line in (EXPORTS / "SOURCES.md").read_text().splitlines():
        m = re.match(r"\| `([^`]+)` \|.*?\| (\d+) / \d+ / \d+ \|", line)
        if m:
            counts[m.group(1)] = int(m.group(2))
    return counts


def export_path(name: str) -> Path:
    """The path read_export takes for a folder of the set: rad_mentor has no overall
    metadata, so its per-kind metadata file."""
    if name == "rad_mentor":
        return next((EXPORTS / name).glob("all_namespaces/*/*.export_metadata"))
    return EXPORTS / name


def read_all(path: Path | str, **kw: object) -> list[ds.Entity]:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a clean export issues no warning
        return list(ds.read_export(path, **kw))  # type: ignore[arg-type]


def entity(name: str, props: dict[str, object], app: str = "dev~demo") -> ds.Entity:
    return ds.Entity(props, key=ds.Key([("items", name)], app=app))


# ---------------------------------------------------------------------------
# Real exports
# ---------------------------------------------------------------------------


@needs_exports
def test_every_real_export_yields_the_entities_sources_md_states_without_a_warning() -> None:
    counts = sources_table()
    assert len(counts) == 30 and sum(counts.values()) > 24000
    for name, count in counts.items():
        export = ds.read_export(export_path(name))
        entities = read_all(export_path(name))
        assert len(entities) == count, name
        if export.expected is not None:  # the overall metadata's own count agrees
            assert export.expected == count, name
        assert all(isinstance(e, ds.Entity) and isinstance(e.key, ds.Key) for e in entities)


@needs_exports
def test_real_exports_decode_as_ndb_s_legacy_codec_reads_them() -> None:
    pytest.importorskip("google.cloud.ndb")
    from support.ndb_values import ndb_decode

    for name in sources_table():
        for path in ds.read_export(export_path(name)).files:
            for record in leveldb_log.Reader(path):
                assert ds.decode_entity(record) == ndb_decode(record), (name, path)


@needs_exports
def test_re_encoding_real_records_gives_them_back_byte_for_byte() -> None:
    # The emulator and gcloud write values as raw_property; the Datastore-mode export
    # (step104-2020) and one indexed embedded entity of digital-platform use `property`,
    # which an Entity does not record.
    differ = {"step104-2020": 529, "digital-platform": 1}
    for name in sources_table():
        changed = 0
        for path in ds.read_export(export_path(name)).files:
            for record in leveldb_log.Reader(path):
                changed += ds.encode_entity(ds.decode_entity(record)) != record
        assert changed == differ.get(name, 0), name


@needs_exports
def test_rebuilding_emulator_exports_gives_their_files_byte_for_byte(tmp_path: Path) -> None:
    for name, windows in [("firebase-geo", False), ("bdc-cms", False), ("EveryBoard", True)]:
        original = files_of(EXPORTS / name)
        meta = next(k for k in original if k.endswith(".export_metadata"))
        fields = dict(_fields(dict(_fields(original[meta]))[1]))
        export = ds.read_export(EXPORTS / name)
        built = write_export(
            tmp_path / name,
            [("", [read_all(f) for f in export.files])],
            start=fields[2],
            end=fields[3],
            windows=windows,
        )
        assert built.name == "firestore_export.overall_export_metadata"
        assert files_of(tmp_path / name) == original, name


def _fields(data: bytes) -> list[tuple[int, object]]:
    from leveldb_log.datastore._metadata import _fields as fields

    return list(fields(data))


@needs_exports
def test_real_values_have_their_exact_types() -> None:
    geo = read_all(EXPORTS / "firebase-geo")
    point = geo[0]["location"]
    assert type(point) is ds.GeoPoint and point == (40.723084, -73.994528)
    assert type(geo[0]["_geo_"]) is dict  # a map
    refs = read_all(EXPORTS / "firestore-algolia-search")
    main = next(e["main"] for e in refs if "main" in e)
    assert main == ds.Key([("actors", "o6oXEHovcjVloJwPOI0n")], app="dev~algolia")
    assert main.project == "algolia" and main.app == "dev~algolia" and main.namespace == ""
    early = [
        v
        for e in read_all(EXPORTS / "digital-platform")
        for v in e.values()
        if isinstance(v, datetime.datetime) and v.year < 1970
    ]
    assert early and all(v.tzinfo is UTC for v in early)
    assert datetime.datetime(1899, 12, 31, 12, tzinfo=UTC) in early
    swift = [v for e in read_all(EXPORTS / "Swift-Firestore-Guide") for v in _walk(e)]
    assert any(isinstance(v, datetime.datetime) and v.year == 1843 for v in swift)


def _walk(v: object) -> list[object]:
    """Every value inside v (maps and arrays opened), v included."""
    out = [v]
    if isinstance(v, dict):
        for x in v.values():
            out += _walk(x)
    elif isinstance(v, list):
        for x in v:
            out += _walk(x)
    return out


@needs_exports
def test_real_nesting_keys_and_empty_arrays() -> None:
    bsc = read_all(EXPORTS / "bsclibrary")
    assert max(len(e.key.path) for e in bsc) == 3
    deep = read_all(EXPORTS / "bdc-cms")
    assert any(isinstance(v, list) and v and isinstance(v[0], dict) for e in deep for v in _walk(e))
    every = read_all(EXPORTS / "EveryBoard")
    assert any(v == [] and type(v) is list for e in every for v in e.values())
    assert any(len(e.key.path) == 2 for e in every)  # users/x/elos/y
    step = read_all(EXPORTS / "step104-2020")
    assert {e.key.app.split("~")[0] for e in step} == {"s"}
    assert any(isinstance(e.key.id_or_name, int) for e in step)
    assert step[0].key.project.startswith("google.com:")


@needs_exports
def test_layout_quirks_of_the_real_set() -> None:
    rad = ds.read_export(export_path("rad_mentor"))
    assert [Path(f).name for f in rad.files] == [f"output-{i}" for i in range(48)]
    assert rad.expected is None
    assert len(read_all(rad.files[10])) > 0  # one output file on its own
    empty = ds.read_export(EXPORTS / "EveryBoard-empty")
    assert empty.files == [] and empty.expected == 0 and list(empty) == []
    step = ds.read_export(EXPORTS / "step104-2020")
    assert any(Path(f).stat().st_size == 0 for f in step.files)  # an empty output-1
    elewa = ds.read_export(EXPORTS / "elewa")  # __MACOSX/._* is no export
    assert all("__MACOSX" not in f for f in elewa.files)
    windows = ds.read_export(EXPORTS / "catan_now")  # "\" separators
    assert len(windows.files) == 1 and Path(windows.files[0]).is_file()
    padded = read_all(EXPORTS / "Miksing-Firebase")  # zero-padded to 32 KiB
    assert len(padded) == 2
    with pytest.raises(ValueError, match=r"no \*\.overall_export_metadata"):
        ds.read_export(EXPORTS / "rad_mentor")


@needs_exports
def test_kinds_and_namespaces_filter() -> None:
    every = read_all(EXPORTS / "EveryBoard")
    kinds = {e.key.kind for e in every}
    one = sorted(kinds)[0]
    assert read_all(EXPORTS / "EveryBoard", kinds=[one]) == [e for e in every if e.key.kind == one]
    assert read_all(EXPORTS / "EveryBoard", kinds=one) == [e for e in every if e.key.kind == one]
    assert read_all(EXPORTS / "EveryBoard", namespaces=[""]) == every
    assert read_all(EXPORTS / "EveryBoard", namespaces=["other"]) == []


# ---------------------------------------------------------------------------
# Built exports
# ---------------------------------------------------------------------------


def test_a_built_export_with_several_kinds_and_files_reads_in_metadata_order(
    tmp_path: Path,
) -> None:
    a = [[entity(f"a{i}", {"n": i}) for i in range(3)], [], [entity("a9", {"n": 9})]]
    b = [[entity(f"b{i}", {"s": str(i)}) for i in range(2)] for _ in range(11)]
    overall = write_export(tmp_path / "exp", [("A", a), ("B", b)], windows=True)
    want = [e for f in a + b for e in f]
    assert read_all(tmp_path / "exp") == want
    assert read_all(overall) == want
    export = ds.read_export(overall)
    assert export.expected == len(want)
    names = [Path(f).name for f in export.files]
    assert names == [f"output-{i}" for i in range(3)] + [f"output-{i}" for i in range(11)]
    per_kind = next((tmp_path / "exp").glob("all_namespaces/kind_B/*.export_metadata"))
    assert read_all(per_kind) == [e for f in b for e in f]


def test_a_nested_export_and_decoys_are_not_read(tmp_path: Path) -> None:
    write_export(tmp_path / "outer", [("", [[entity("x", {"v": 1})]])])
    write_export(tmp_path / "outer" / "inner", [("", [[entity("y", {"v": 2})]])])
    (tmp_path / "outer" / "._firestore_export.overall_export_metadata").write_bytes(b"\0" * 163)
    assert [e.key.id_or_name for e in read_all(tmp_path / "outer")] == ["x"]
    write_export(tmp_path / "outer", [("", [[entity("x", {"v": 1})]])], name="second")
    with pytest.raises(ValueError, match=r"2 \*\.overall_export_metadata"):
        ds.read_export(tmp_path / "outer")


def test_zero_padding_and_empty_output_files_issue_no_warning(tmp_path: Path) -> None:
    write_export(tmp_path / "e", [("", [[entity("a", {"v": 1})], []])])
    out = tmp_path / "e" / "all_namespaces" / "all_kinds" / "output-0"
    data = out.read_bytes()
    out.write_bytes(data + b"\0" * (leveldb_log.BLOCK_SIZE - len(data)))
    assert read_all(tmp_path / "e") == [entity("a", {"v": 1})]


def test_an_export_through_an_fsspec_url(tmp_path: Path) -> None:
    fsspec = pytest.importorskip("fsspec")
    write_export(tmp_path / "e", [("", [[entity("a", {"v": 1})], [entity("b", {"v": 2})]])])
    fs = fsspec.filesystem("memory")
    for rel, data in files_of(tmp_path / "e").items():
        fs.pipe(f"/ds-test/{rel}", data)
    try:
        got = read_all("memory://ds-test")
        assert [e["v"] for e in got] == [1, 2]
        with pytest.raises(ValueError, match="storage_options"):
            ds.read_export(tmp_path / "e", storage_options={"x": 1})
    finally:
        fs.rm("/ds-test", recursive=True)


# ---------------------------------------------------------------------------
# Damage and bad input
# ---------------------------------------------------------------------------


def test_a_flipped_byte_is_reported_and_every_undamaged_entity_still_read(tmp_path: Path) -> None:
    entities = [entity(f"e{i}", {"text": "x" * 3000, "i": i}) for i in range(40)]
    write_export(tmp_path / "e", [("", [entities])])
    out = tmp_path / "e" / "all_namespaces" / "all_kinds" / "output-0"
    data = bytearray(out.read_bytes())
    offsets = [o for o, _ in _offsets(bytes(data))]
    hit = offsets[17] + 100  # inside record 17's payload
    data[hit] ^= 0x40
    out.write_bytes(bytes(data))
    with pytest.warns(leveldb_log.CorruptionWarning):
        got = list(ds.read_export(tmp_path / "e"))
    # LevelDB's reader drops the rest of the damaged block from the damaged record on: the
    # records that start there (and one that runs on into the next block) are lost, the
    # rest are read.
    kept = {o for o, _ in _offsets(bytes(data))}
    lost = [i for i, o in enumerate(offsets) if o not in kept]
    block_end = (hit // leveldb_log.BLOCK_SIZE + 1) * leveldb_log.BLOCK_SIZE
    assert lost and lost[0] == 17 and lost == list(range(17, lost[-1] + 1))
    assert offsets[lost[-1]] < block_end and len(lost) <= 12
    assert got == [e for i, e in enumerate(entities) if i not in lost]
    seen: list[leveldb_log.Corruption] = []
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        again = list(ds.read_export(tmp_path / "e", on_corruption=seen.append))
    assert again == got and seen and seen[0].offset == offsets[17]


def _offsets(data: bytes) -> list[tuple[int, bytes]]:
    reader = leveldb_log.Reader(data, on_corruption=lambda c: None)  # counted by the caller
    return [(reader.last_record_offset or 0, r) for r in reader]


def test_a_record_that_is_no_entity_raises_after_the_ones_before(tmp_path: Path) -> None:
    good = [entity("a", {"v": 1}), entity("b", {"v": 2})]
    out = tmp_path / "output-0"
    records = [ds.encode_entity(e) for e in good] + [b"not an entity", ds.encode_entity(good[0])]
    write_log(out, records)
    got: list[ds.Entity] = []
    with pytest.raises(ds.EntityDecodeError) as info:
        for e in ds.read_export(out):
            got.append(e)
    assert got == good
    offset = _offsets(out.read_bytes())[2][0]
    assert info.value.offset == offset and info.value.path == str(out)
    assert isinstance(info.value, ValueError)
    assert str(out) in str(info.value) and f"offset {offset}" in str(info.value)


BAD = [
    (b"", "without a key"),
    (b"3", "wire type|past the end"),
    (field(14, field(3, b"name")), "without a value"),
    (field(14, field(5, b"")), "without a name"),
    (field(13, field(13, b"dev~x") + field(14, b"")), "empty path"),
    (field(13, b"\x0b\x12\x01k\x0c") + b"\x08", "past the end"),
    (b"\x0b" * 100, "nest too deep|past the end"),
    (field(15, field(3, b"n") + field(5, field(1, 1) + field(3, b"s"))), "two kinds"),
    (field(15, field(3, b"\xff") + field(5, b"")), "not UTF-8"),
    (b"\xff" * 11, "varint"),
    (b"\x0f", "wire type"),
]


@pytest.mark.parametrize(("record", "reason"), BAD)
def test_bad_records_raise_value_error(record: bytes, reason: str) -> None:
    with pytest.raises(ValueError, match=reason):
        ds.decode_entity(record)


def test_every_truncation_of_a_rich_record_raises_or_decodes_never_crashes() -> None:
    rich = ds.encode_entity(entity("r", RICH))
    for n in range(len(rich)):
        try:
            ds.decode_entity(rich[:n])
        except ValueError:
            pass
    for i in range(len(rich)):  # and every single flipped byte
        flipped = bytearray(rich)
        flipped[i] ^= 0xFF
        try:
            ds.decode_entity(bytes(flipped))
        except ValueError:
            pass


def test_embedded_entities_deeper_than_the_limit_are_refused() -> None:
    value: object = {"leaf": 1}
    for _ in range(70):
        value = {"m": value}
    with pytest.raises(ValueError, match="64"):
        ds.encode_entity(entity("deep", {"m": value}))
    record = ds.encode_entity(entity("ok", {"v": 1}))
    for _ in range(70):  # built by hand: ENTITY_PROTO values nested 70 deep
        inner = field(13, field(13, b"") + field(14, b"")) + field(16, b"")
        record = inner + field(15, field(1, 19) + field(3, b"m") + field(5, field(3, record)))
    top = field(13, field(13, b"a") + field(14, b"\x0b\x12\x01k\x22\x01n\x0c"))
    with pytest.raises(ValueError, match="nest too deep"):
        ds.decode_entity(
            top + field(15, field(1, 19) + field(3, b"m") + field(5, field(3, record)))
        )


def test_decode_takes_any_bytes_like_and_refuses_others() -> None:
    record = ds.encode_entity(entity("a", {"v": 1}))
    for form in (record, bytearray(record), memoryview(record)):
        assert ds.decode_entity(form) == entity("a", {"v": 1})
    with pytest.raises(TypeError):
        ds.decode_entity("text")  # type: ignore[arg-type]


# ---------------------------------------------------------------------------
# Values, meanings, Entity and Key
# ---------------------------------------------------------------------------

RICH: dict[str, object] = {
    "none": None,
    "yes": True,
    "int": -(1 << 63),
    "float": -0.0,
    "nan": math.nan,
    "text": "héllo \u2603",
    "blob": b"\x00\xff",
    "when": datetime.datetime(1969, 12, 31, 23, 59, 59, 999999, tzinfo=UTC),
    "where": ds.GeoPoint(-33.5, 151.25),
    "ref": ds.Key([("a", 1), ("b", "c")], app="s~p", namespace="ns", database="db"),
    "user": ds.User("a@b.c", "gmail.com", None, "123", None, None),
    "map": {"inner": {"deep": {"x": [1, "two", None]}}},
    "embedded": ds.Entity({"z": 1}, key=ds.Key([("K", 5)], app="s~p")),
    "array": [1, "a", 2.5, None, {"m": 1}],
    "empty": [],
    "raw": ds.RawValue(99, "kept"),
    "key": "a property named key",
    "items": 1,
    "get": 2,
}


def test_a_rich_entity_round_trips_with_exact_types() -> None:
    e = entity("r", RICH)
    got = ds.decode_entity(ds.encode_entity(e))
    assert got.key == e.key
    nan = got.pop("nan")
    assert type(nan) is float and math.isnan(nan)
    want = dict(RICH)
    del want["nan"]
    assert dict(got) == want
    assert math.copysign(1, got["float"]) == -1
    assert type(got["blob"]) is bytes and type(got["array"]) is list and got["yes"] is True
    assert got["when"].utcoffset() == datetime.timedelta(0)
    assert type(got["embedded"]) is ds.Entity and got["embedded"].key == RICH["embedded"].key
    assert got["key"] == "a property named key" and got["items"] == 1 and got["get"] == 2


def value_record(meaning: int, value: bytes) -> bytes:
    """An entity of one property with this meaning and PropertyValue bytes."""
    key = field(13, field(13, b"dev~p") + field(14, b"\x0b\x12\x01k\x22\x01n\x0c"))
    prop = (field(1, meaning) if meaning else b"") + field(3, b"v") + field(4, 0)
    return key + field(15, prop + field(5, value))


MEANINGS = [
    (0, field(3, b"plain"), "plain"),
    (0, field(3, b"\xff\xfe"), b"\xff\xfe"),  # a string that is not UTF-8 stays bytes
    (15, field(3, b"texte"), "texte"),  # TEXT
    (14, field(3, b"\x01"), b"\x01"),  # BLOB
    (16, field(3, b"\x02"), b"\x02"),  # BYTESTRING
    (22, field(3, b"x\x9c"), b"x\x9c"),  # zlib-compressed, kept compressed
    (8, field(3, b"a@b.c"), "a@b.c"),  # GD_EMAIL
    (2, field(3, b"http://x"), "http://x"),  # ATOM_LINK
    (17, field(3, b"blobkey"), "blobkey"),  # BLOBKEY
    (13, field(1, 4), 4),  # GD_RATING
    (7, field(1, 0), datetime.datetime(1970, 1, 1, tzinfo=UTC)),  # GD_WHEN
    (7, field(1, (1 << 64) - 1), datetime.datetime(1969, 12, 31, 23, 59, 59, 999999, tzinfo=UTC)),
    (7, field(1, 253402300800000000), ds.RawValue(7, 253402300800000000)),  # past 9999
    (18, field(1, 5), 5),  # INDEX_VALUE
    (24, b"", []),  # EMPTY_LIST
    (9, b"\x2b\x31" + b"\0" * 8 + b"\x39" + b"\0" * 8 + b"\x2c", ds.GeoPoint(0.0, 0.0)),
    (15, field(3, b"\xff"), ds.RawValue(15, b"\xff")),  # TEXT that is not UTF-8
    (7, field(3, b"s"), ds.RawValue(7, "s")),  # a meaning that does not fit its value
    (21, field(2, 1), ds.RawValue(21, True)),  # an unknown meaning
    (99, b"", ds.RawValue(99, None)),
]


@pytest.mark.parametrize(("meaning", "value", "want"), MEANINGS)
def test_each_meaning_decodes_as_its_kind_of_value(
    meaning: int, value: bytes, want: object
) -> None:
    got = ds.decode_entity(value_record(meaning, value))["v"]
    assert got == want and type(got) is type(want)


def test_entity_and_key_api() -> None:
    k = ds.Key([("users", "alice"), ("posts", 7)], project="demo")
    assert (k.kind, k.id_or_name, k.app, k.project, k.namespace, k.database) == (
        "posts",
        7,
        "demo",
        "demo",
        "",
        "",
    )
    assert ds.Key([("a", "b")], app="e~x").project == "x"
    assert ds.Key([("a", "b")], app="s~google.com:x").project == "google.com:x"
    assert hash(k) == hash(ds.Key([("users", "alice"), ("posts", 7)], app="demo"))
    assert repr(k) == "Key([('users', 'alice'), ('posts', 7)], app='demo')"
    e = ds.Entity({"a": 1}, key=k)
    assert e == {"a": 1} and e == ds.Entity({"a": 1}, key=k)
    assert e != ds.Entity({"a": 1}, key=ds.Key([("users", "bob")], project="demo"))
    assert "Entity({'a': 1}, key=Key(" in repr(e)
    import pickle

    assert pickle.loads(pickle.dumps(e)) == e and pickle.loads(pickle.dumps(e)).key == k
    for bad in ([("a",)], [("", 1)], [("a", 1.5)], [("a", True)], [("a", 1 << 63)]):
        with pytest.raises((TypeError, ValueError)):
            ds.Key(bad)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="last"):
        ds.Key([("a", None), ("b", 1)])
    with pytest.raises(TypeError):
        ds.Entity({}, key="k")  # type: ignore[arg-type]


ENCODE_ERRORS = [
    ({"v": object()}, TypeError, "cannot store"),
    ({"v": [[1]]}, TypeError, "array cannot hold an array"),
    ({"v": 1 << 63}, ValueError, "64 bits"),
    ({"v": datetime.datetime(2020, 1, 1)}, ValueError, "tz-aware"),
    ({1: 2}, TypeError, "property name"),
]


@pytest.mark.parametrize(("props", "error", "match"), ENCODE_ERRORS)
def test_encode_refuses_what_an_export_cannot_hold(
    props: dict, error: type[Exception], match: str
) -> None:
    with pytest.raises(error, match=match):
        ds.encode_entity(entity("x", props))


def test_encode_needs_a_key() -> None:
    with pytest.raises(TypeError, match="Key"):
        ds.encode_entity({"a": 1})
    assert ds.encode_entity({"a": 1}, key=ds.Key([("k", 1)])) == ds.encode_entity(
        ds.Entity({"a": 1}, key=ds.Key([("k", 1)]))
    )
    with pytest.raises(ValueError, match="path"):
        ds.encode_entity({"a": 1}, key=ds.Key([]))


def test_a_missing_path_fails_at_the_call_naming_it(tmp_path: Path) -> None:
    missing = tmp_path / "nope"
    with pytest.raises(FileNotFoundError) as info:
        ds.read_export(missing)
    assert str(missing) in str(info.value)


def test_a_file_that_is_no_export_fails_at_the_call_saying_what_was_expected(
    tmp_path: Path,
) -> None:
    text = tmp_path / "README.md"
    text.write_text("# a text file, no log\n" * 100)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # refused, with no warning on the way
        with pytest.raises(ValueError, match=r"not a Firestore/Datastore export: expected an"):
            ds.read_export(text)
    records = tmp_path / "records.log"
    write_log(records, [b"a log, but of no entities"])
    with pytest.raises(ds.EntityDecodeError, match="a log of EntityProto records") as info:
        ds.read_export(records)
    assert (info.value.path, info.value.offset) == (str(records), 0)
    empty = tmp_path / "output-1"  # an output file of no entities is one
    empty.write_bytes(b"")
    assert list(ds.read_export(empty)) == []
