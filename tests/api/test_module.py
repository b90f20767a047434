"""Tests of leveldb_log's module-level API (docs/api.md, "Checksums", "Constants", "Errors"):
crc32c, mask_crc and unmask_crc, the constants and RecordType, the exception types.

Expected values come from the reference model (tests/support/model.py).
"""

from __future__ import annotations

import leveldb_log
import pytest
from leveldb_log import (
    BLOCK_SIZE,
    HEADER_SIZE,
    Corruption,
    CorruptionError,
    LogError,
    Reader,
    RecordType,
    TruncatedRecordError,
)
from support import model

# ---------------------------------------------------------------------------
# Checksums, constants, errors
# ---------------------------------------------------------------------------


def test_crc32c_known_values():
    assert leveldb_log.crc32c(b"123456789") == 0xE3069283
    assert leveldb_log.crc32c(b"") == 0
    assert leveldb_log.crc32c(b"\x00" * 32) == 0x8A9136AA
    assert leveldb_log.crc32c(b"\xff" * 32) == 0x62A8AB43


@pytest.mark.parametrize("n", [0, 1, 3, 7, 8, 15, 16, 63, 64, 1000, 4097, 70000])
def test_crc32c_matches_model_for_bytes_like_types(n):
    data = bytes((i * 131 + 7) % 256 for i in range(n))
    expected = model.crc32c(data)
    assert leveldb_log.crc32c(data) == expected
    assert leveldb_log.crc32c(bytearray(data)) == expected
    assert leveldb_log.crc32c(memoryview(data)) == expected
    assert leveldb_log.crc32c(data=data, value=0) == expected


def test_crc32c_chunked_continuation_matches_whole():
    data = bytes((i * 97 + 3) % 256 for i in range(100000))
    whole = leveldb_log.crc32c(data)
    assert whole == model.crc32c(data)
    for cuts in ([1], [7, 8, 9], [65535, 65536], [3, 50000, 99999]):
        value = 0
        prev = 0
        for c in [*cuts, len(data)]:
            value = leveldb_log.crc32c(memoryview(data)[prev:c], value)
            prev = c
        assert value == whole
    assert leveldb_log.crc32c(b"456789", leveldb_log.crc32c(b"123")) == 0xE3069283
    assert leveldb_log.crc32c(b"abc", 12345) == model.crc32c(b"abc", 12345)


def test_crc32c_rejects_non_bytes_like():
    for bad in ("str", None, 5, [1, 2]):
        with pytest.raises(TypeError):
            leveldb_log.crc32c(bad)
    with pytest.raises(TypeError):
        leveldb_log.crc32c(b"x", "1")
    with pytest.raises(TypeError):
        leveldb_log.crc32c(b"x", 1.0)


@pytest.mark.parametrize("value", [-1, 2**32, 2**32 + 5, 2**64, 2**64 + 5, -(2**64) + 1])
def test_crc32c_value_out_of_32_bits_raises_value_error(value):
    with pytest.raises(ValueError):
        leveldb_log.crc32c(b"abc", value)


def test_mask_unmask_are_inverse_and_match_model():
    values = [
        0,
        1,
        0x7FFF,
        0x8000,
        0xA282EAD8,
        0xDEADBEEF,
        0xFFFFFFFF,
        *(model.crc32c(b"%d" % i) for i in range(200)),
    ]
    for v in values:
        m = leveldb_log.mask_crc(v)
        assert m == model.mask_crc(v)
        assert leveldb_log.unmask_crc(m) == v
        assert leveldb_log.mask_crc(leveldb_log.unmask_crc(v)) == v
        assert 0 <= m < 2**32
    # reference bytes: FULL b"foo" stores masked crc 0x7ab35fdd
    assert leveldb_log.mask_crc(leveldb_log.crc32c(b"\x01foo")) == 0x7AB35FDD


@pytest.mark.parametrize("func", ["mask_crc", "unmask_crc"])
def test_mask_unmask_range_and_type_errors(func):
    f = getattr(leveldb_log, func)
    for bad in (-1, 2**32, 2**64, 2**100, -(2**64)):
        with pytest.raises(ValueError):
            f(bad)
    for bad in (1.0, "1", None, b"\x01"):
        with pytest.raises(TypeError):
            f(bad)


def test_constants_and_record_types():
    assert BLOCK_SIZE == 32768
    assert HEADER_SIZE == 7
    import enum

    assert issubclass(RecordType, enum.IntEnum)
    assert [(m.name, m.value) for m in RecordType] == [
        ("ZERO", 0),
        ("FULL", 1),
        ("FIRST", 2),
        ("MIDDLE", 3),
        ("LAST", 4),
    ]
    assert RecordType(1) is RecordType.FULL
    assert RecordType.LAST == 4


def test_exception_hierarchy_and_corruption_tuple():
    assert issubclass(LogError, Exception)
    assert issubclass(CorruptionError, LogError)
    assert issubclass(CorruptionError, ValueError)
    assert issubclass(TruncatedRecordError, CorruptionError)
    e = CorruptionError(5, 6, "checksum mismatch")
    assert (e.offset, e.size, e.reason) == (5, 6, "checksum mismatch")
    c = Corruption(1, 2, "bad record length")
    assert c._fields == ("offset", "size", "reason")
    assert isinstance(c, tuple)
    assert (c.offset, c.size, c.reason) == (1, 2, "bad record length")
    assert c == (1, 2, "bad record length")


def test_corruption_error_raised_by_reader_carries_details():
    data, offsets = model.encode([b"a" * 10, b"b" * 10, b"c" * 10])
    damaged = bytearray(data)
    damaged[offsets[1] + HEADER_SIZE] ^= 1
    with pytest.raises(CorruptionError) as info:
        list(Reader(bytes(damaged), recovery="tolerate_tail"))
    assert not isinstance(info.value, TruncatedRecordError)
    assert isinstance(info.value, ValueError) and isinstance(info.value, LogError)
    assert info.value.offset == offsets[1]
    assert info.value.reason == "checksum mismatch"
    assert info.value.size == len(damaged) - offsets[1]


def test_crc32c_implementation_is_a_nonempty_str():
    assert isinstance(leveldb_log.crc32c_implementation, str)
    assert leveldb_log.crc32c_implementation


def test_type_and_mode_names_come_from_one_list() -> None:
    """The core's lists (csrc/core/log_format.h) are what the binding exports, and the
    stubs, RecordType, the CLI's choices and the independent model agree with them."""
    import ast
    import pathlib
    import typing

    from leveldb_log import RecordType, _core
    from leveldb_log.cli import build_parser

    assert _core.RECORD_TYPES == {t.value: t.name for t in RecordType}
    assert _core.RECOVERY_MODES == model.RECOVERY_MODES
    stub = pathlib.Path(_core.__file__).with_name("_core.pyi")  # shipped beside it
    tree = ast.parse(stub.read_text())
    (recovery,) = [
        node.value
        for node in tree.body
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "Recovery"
    ]
    literal = eval(compile(ast.Expression(recovery), "stub", "eval"), {"Literal": typing.Literal})
    assert typing.get_args(literal) == _core.RECOVERY_MODES
    help_text = build_parser().format_help()
    assert "dump" in help_text
    dump = build_parser()._subparsers._group_actions[0].choices["dump"]  # type: ignore[union-attr]
    (action,) = [a for a in dump._actions if a.dest == "recovery"]
    assert tuple(action.choices) == _core.RECOVERY_MODES


def test_splits_takes_its_options_by_keyword_only() -> None:
    """Every option of the package's functions is keyword-only; splits() was the odd one out
    (splits(source, n, size)). The source stays positional."""
    import inspect

    data = b"\x00" * (3 * BLOCK_SIZE)
    with pytest.raises(TypeError):
        leveldb_log.splits(data, 2)  # type: ignore[misc]
    with pytest.raises(TypeError):
        leveldb_log.splits(data, None, BLOCK_SIZE)  # type: ignore[misc]
    assert leveldb_log.splits(data, n=2) == [(0, BLOCK_SIZE), (BLOCK_SIZE, 3 * BLOCK_SIZE)]
    params = inspect.signature(leveldb_log.splits).parameters
    assert [p.kind for p in params.values()] == [
        inspect.Parameter.POSITIONAL_OR_KEYWORD,
        *[inspect.Parameter.KEYWORD_ONLY] * (len(params) - 1),
    ]


def _public_modules() -> list[str]:
    """Every module of the package whose dotted name has no private part (``__main__``
    runs the command line when imported, and is private by the same rule)."""
    import pkgutil

    names = ["leveldb_log"]
    for info in pkgutil.walk_packages(leveldb_log.__path__, "leveldb_log."):
        if not any(part.startswith("_") for part in info.name.split(".")):
            names.append(info.name)
    return names


def test_the_public_modules_are_the_documented_ones() -> None:
    """So that a module added, or made public by a rename, is not missed by the dir() test."""
    assert _public_modules() == [
        "leveldb_log",
        "leveldb_log.cli",
        "leveldb_log.cli.cat",
        "leveldb_log.cli.dump",
        "leveldb_log.cli.split",
        "leveldb_log.cli.stats",
        "leveldb_log.cli.verify",
        "leveldb_log.cli.write",
        "leveldb_log.dask",
        "leveldb_log.datastore",
        "leveldb_log.leveldb",
        "leveldb_log.pebble",
        "leveldb_log.ray",
        "leveldb_log.rocksdb",
        "leveldb_log.spark",
    ]


@pytest.mark.parametrize("name", _public_modules())
def test_public_module_dir_lists_only_its_api(name: str) -> None:
    """dir() (and so tab completion) offers a module's __all__ and its public submodules,
    not what it imports for its own use (``annotations``, ``IntEnum``, ``Any``, ``os``)."""
    import importlib
    import types

    module = importlib.import_module(name)
    public = {n for n in dir(module) if not n.startswith("_")}
    submodules = {
        n
        for n, v in vars(module).items()
        if isinstance(v, types.ModuleType) and v.__name__ == f"{name}.{n}" and n[0] != "_"
    }
    assert public == set(module.__all__) | submodules
    assert all(hasattr(module, n) for n in module.__all__)
    assert "__doc__" in dir(module) and "__name__" in dir(module)


def test_named_leaks_are_gone() -> None:
    import leveldb_log.datastore

    assert {"annotations", "IntEnum"}.isdisjoint(dir(leveldb_log))
    assert "Any" not in dir(leveldb_log.datastore)


@pytest.mark.parametrize("name", leveldb_log.__all__)
def test_no_public_name_is_shadowed_by_a_module_of_the_same_name(name: str) -> None:
    """leveldb_log.scan was a module hidden by its own function: import leveldb_log.scan
    and leveldb_log.scan disagreed. A public name is the module it names, or no module."""
    import importlib.util
    import types

    is_module = isinstance(getattr(leveldb_log, name), types.ModuleType)
    assert is_module or importlib.util.find_spec(f"leveldb_log.{name}") is None, name


LAZY = [
    "leveldb_log.leveldb",
    "leveldb_log.rocksdb",
    "leveldb_log.pebble",
    "leveldb_log._database_logs",
]


def _loaded_after(code: str) -> set[str]:
    """The modules of leveldb_log that a fresh interpreter has loaded after running code."""
    import subprocess
    import sys

    probe = (
        code
        + "\nimport sys; print(' '.join(m for m in sys.modules if m.startswith('leveldb_log')))"
    )
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    return set(out.stdout.split())


def test_the_decoders_load_when_first_asked_for() -> None:
    """import leveldb_log leaves the payload decoders and database_logs unloaded (half its
    time); the first use of each name loads it, by attribute or by from-import alike."""
    assert _loaded_after("import leveldb_log").isdisjoint(LAZY)
    loaded = _loaded_after(
        "import leveldb_log\n"
        "assert leveldb_log.rocksdb.Put.__module__ == 'leveldb_log.rocksdb'\n"
        "from leveldb_log import pebble, leveldb\n"
        "assert leveldb_log.pebble is pebble and leveldb.InternalKey\n"
        "assert leveldb_log.database_logs.__module__ == 'leveldb_log._database_logs'\n"
    )
    assert set(LAZY) <= loaded
    with pytest.raises(AttributeError, match="has no attribute 'no_such_name'"):
        leveldb_log.no_such_name  # noqa: B018


def test_the_command_line_loads_rocksdb_and_pebble_only_to_decode_them() -> None:
    assert _loaded_after("import leveldb_log.cli").isdisjoint(LAZY[1:3])
    decoded = "import leveldb_log.cli.dump as d, argparse\n" + (
        "d._record_formatter(argparse.Namespace(format='text', decode=True, "
        "dialect='rocksdb', kind='wal'), 'rocksdb')"
    )
    assert set(LAZY[1:3]) <= _loaded_after(decoded)
