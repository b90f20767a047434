"""help() is documentation a user can live on: every public name says what it takes, returns
and raises; Reader and Writer carry their rules; the stubs carry the same text as the
extension, so an IDE shows what help() shows."""

from __future__ import annotations

import ast
import inspect
import io
import pydoc
import types
from pathlib import Path
from typing import Any

import leveldb_log
import pytest
from leveldb_log import Reader, Writer, leveldb
from leveldb_log import stats as stats_module

STUB = Path(leveldb_log.__file__).resolve().parent / "_core.pyi"

# Public names that are plain values: they have no docstring of their own (docs/api.md
# describes them).
DATA = {
    "BLOCK_SIZE",
    "DIALECTS",
    "HEADER_SIZE",
    "crc32c_implementation",
    "crc32c_implementations",
}

# Slots whose doc CPython writes ("Implement next(self)."): the stub leaves them bare.
SLOTS = {"__init__", "__iter__", "__next__"}


def own_doc(obj: Any) -> str:
    """The object's docstring, cleaned; '' when it only inherits one."""
    if isinstance(obj, type) and "__doc__" not in vars(obj):
        return ""
    return inspect.cleandoc(obj.__doc__ or "")


def public_names() -> list[str]:
    return [name for name in leveldb_log.__all__ if name not in DATA]


def documented_members(cls: type) -> dict[str, Any]:
    """The methods and properties the type defines itself, private ones included."""
    kinds = (
        types.MethodDescriptorType,
        types.GetSetDescriptorType,
        types.MemberDescriptorType,
        property,
    )
    return {name: m for name, m in vars(cls).items() if isinstance(m, kinds)}


def test_data_names_are_values_not_undocumented_callables() -> None:
    for name in DATA:
        value = getattr(leveldb_log, name)
        assert isinstance(value, (int, str, tuple)), name


@pytest.mark.parametrize("name", public_names())
def test_every_public_name_has_help_of_its_own(name: str) -> None:
    obj = getattr(leveldb_log, name)
    assert isinstance(obj, (type, types.ModuleType)) or callable(obj), name
    doc = own_doc(obj)
    lines = [line for line in doc.splitlines() if line.strip()]
    assert len(lines) >= 3, f"{name}: {doc!r}"
    rendered = pydoc.render_doc(obj, renderer=pydoc.plaintext)
    assert lines[0] in rendered


FUNCTIONS = [
    leveldb_log.crc32c,
    leveldb_log.mask_crc,
    leveldb_log.unmask_crc,
    leveldb_log.scan,
    leveldb_log.splits,
    stats_module.stats,
    leveldb.decode_write_batch,
    leveldb.encode_write_batch,
    leveldb.decode_version_edit,
    leveldb.encode_version_edit,
]


@pytest.mark.parametrize("func", FUNCTIONS, ids=lambda f: f.__name__)
def test_functions_say_what_they_take_return_and_raise(func: Any) -> None:
    doc = own_doc(func)
    for section in ("Arguments", "Returns", "Raises"):
        assert f"\n{section}\n" in doc, f"{func.__name__}: no {section!r} section"


@pytest.mark.parametrize("name", leveldb.__all__)
def test_leveldb_names_are_documented(name: str) -> None:
    obj = getattr(leveldb, name)
    if isinstance(obj, int) or name == "Operation":  # constants and a type alias
        return
    assert own_doc(obj), name


@pytest.mark.parametrize("cls", [Writer, Reader], ids=lambda c: c.__name__)
def test_every_method_and_property_has_a_doc(cls: type) -> None:
    members = documented_members(cls)
    public = {name for name in members if not name.startswith("_")}
    assert public >= {"close", "closed"}, public
    for name in public | {"__enter__", "__exit__", "__reduce__"}:
        doc = own_doc(members[name])
        assert len(doc) >= 20, f"{cls.__name__}.{name}: {doc!r}"
        if isinstance(members[name], types.MethodDescriptorType) and name != "__exit__":
            assert "Returns" in doc or "Raises" in doc, f"{cls.__name__}.{name}"


def test_reader_help_has_the_modes_the_range_rule_and_the_reports() -> None:
    text = pydoc.render_doc(Reader, renderer=pydoc.plaintext)
    for needle in (
        "'skip'",
        "'tolerate_tail'",
        "'point_in_time'",
        "'absolute'",
        "[start, end)",
        "first header",
        "on_corruption",
        "CorruptionWarning",
        "TruncatedRecordError",
        "torn tail",
        "appended since",
        "pickles",
        "Raises",
    ):
        assert needle in text, needle


def test_writer_help_has_the_modes_buffering_and_closing() -> None:
    text = pydoc.render_doc(Writer, renderer=pydoc.plaintext)
    for needle in (
        "'w'",
        "'x'",
        "Mode 'a'",
        "does not end like a log",
        "CorruptionError",
        "buffering",
        "closefd",
        "sync()",
        "power loss",
        "ResourceWarning",
        "threads",
        "TypeError",
        "Raises",
    ):
        assert needle in text, needle


def parameters(obj: Any) -> list[str]:
    return list(inspect.signature(obj).parameters)


def test_signatures_of_the_c_functions_and_methods() -> None:
    assert parameters(leveldb_log.crc32c) == ["data", "value"]
    assert inspect.signature(leveldb_log.crc32c).parameters["value"].default == 0
    assert parameters(leveldb_log.mask_crc) == ["crc"]
    assert parameters(leveldb_log.unmask_crc) == ["masked"]
    assert parameters(Writer) == [
        "target",
        "mode",
        "buffering",
        "closefd",
        "dialect",
        "log_number",
        "recycle",
        "compression",
        "sync_offsets",
        "storage_options",
        "sync",
        "bytes_per_sync",
        "preallocate",
        "lock",
    ]
    assert parameters(Reader) == [
        "source",
        "dialect",
        "log_number",
        "recovery",
        "verify_checksums",
        "start",
        "end",
        "on_corruption",
        "storage_options",
    ]
    assert parameters(Writer.write) == ["self", "data", "sync"]
    assert parameters(Writer.write_many) == ["self", "records", "sync"]
    assert parameters(Reader.__exit__) == ["self", "exc_type", "exc", "tb"]
    with Writer(io.BytesIO()) as w:
        assert parameters(w.write) == ["data", "sync"]  # bound: self is not shown
        assert parameters(w.flush) == []


# ---- the stub against the extension ---------------------------------------------------


def stub_tree() -> ast.Module:
    return ast.parse(STUB.read_text(encoding="utf-8"))


def stub_class(name: str) -> ast.ClassDef:
    found = [n for n in stub_tree().body if isinstance(n, ast.ClassDef) and n.name == name]
    assert len(found) == 1, name
    return found[0]


def stub_functions(body: list[ast.stmt]) -> dict[str, ast.FunctionDef]:
    return {n.name: n for n in body if isinstance(n, ast.FunctionDef)}


def stub_parameters(node: ast.FunctionDef) -> list[str]:
    args = node.args
    every = [*args.posonlyargs, *args.args, *args.kwonlyargs]
    return [a.arg for a in every]


@pytest.mark.parametrize("name", ["crc32c", "mask_crc", "unmask_crc", "_append_point"])
def test_stub_functions_carry_the_runtime_docstrings(name: str) -> None:
    node = stub_functions(stub_tree().body)[name]
    runtime = getattr(leveldb_log._core, name)
    assert ast.get_docstring(node) == own_doc(runtime)
    assert stub_parameters(node) == parameters(runtime)


@pytest.mark.parametrize("cls", [Writer, Reader], ids=lambda c: c.__name__)
def test_stub_classes_carry_the_runtime_docstrings(cls: type) -> None:
    node = stub_class(cls.__name__)
    assert ast.get_docstring(node) == own_doc(cls)
    stub = stub_functions(node.body)
    runtime = documented_members(cls)
    for name, fn in stub.items():
        doc = ast.get_docstring(fn)
        if name in SLOTS:
            assert doc is None, f"{cls.__name__}.{name}: the runtime doc is CPython's"
            continue
        assert doc is not None, f"{cls.__name__}.{name} has no docstring in the stub"
        assert doc == own_doc(runtime[name]), f"{cls.__name__}.{name}"
    missing = {n for n in runtime if not n.startswith("_")} - set(stub)
    assert not missing, f"not in the stub: {missing}"


@pytest.mark.parametrize("cls", [Writer, Reader], ids=lambda c: c.__name__)
def test_stub_signatures_match_the_runtime_ones(cls: type) -> None:
    stub = stub_functions(stub_class(cls.__name__).body)
    assert stub_parameters(stub["__init__"])[1:] == parameters(cls)
    for name, member in documented_members(cls).items():
        if isinstance(member, types.MethodDescriptorType) and name in stub:
            assert stub_parameters(stub[name]) == parameters(member), f"{cls.__name__}.{name}"
