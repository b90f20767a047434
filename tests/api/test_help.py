"""help() is documentation a user can live on: every public name says what it takes, returns
and raises; Reader and Writer carry their rules; the extensions' C docstrings are generated
from the stubs at build time (csrc/docstrings.py), so an IDE shows what help() shows."""

from __future__ import annotations

import ast
import inspect
import pydoc
import types
from pathlib import Path
from typing import Any

import leveldb_log
import leveldb_log._core
import leveldb_log._datastore
import pytest
from leveldb_log import Reader, Writer, leveldb, pebble, rocksdb

PACKAGE = Path(leveldb_log.__file__).resolve().parent

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
SLOTS = {"__init__", "__iter__", "__next__", "__len__"}


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
    leveldb_log.stats,
    leveldb.decode_write_batch,
    leveldb.encode_write_batch,
    leveldb.decode_version_edit,
    leveldb.encode_version_edit,
    rocksdb.decode_write_batch,
    rocksdb.encode_write_batch,
    rocksdb.decode_version_edit,
    pebble.decode_write_batch,
    pebble.encode_write_batch,
]


@pytest.mark.parametrize("func", FUNCTIONS, ids=lambda f: f"{f.__module__}.{f.__name__}")
def test_functions_say_what_they_take_return_and_raise(func: Any) -> None:
    doc = own_doc(func)
    for section in ("Arguments", "Returns", "Raises"):
        assert f"\n{section}\n" in doc, f"{func.__name__}: no {section!r} section"


@pytest.mark.parametrize(
    ("module", "name"),
    [(m, name) for m in (leveldb, rocksdb, pebble) for name in m.__all__],
    ids=lambda x: x if isinstance(x, str) else x.__name__.rsplit(".", 1)[1],
)
def test_payload_module_names_are_documented(module: types.ModuleType, name: str) -> None:
    obj = getattr(module, name)
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


# ---- the stubs against the extensions -------------------------------------------------
# setup.py compiles each stub's docstrings (and its defs' signatures) into its extension:
# every C-level object must have its docstring in the stub, and the stub none of its own.

EXTENSIONS = {"_core": leveldb_log._core, "_datastore": leveldb_log._datastore}


def stub_tree(extension: str) -> ast.Module:
    return ast.parse((PACKAGE / f"{extension}.pyi").read_text(encoding="utf-8"))


def stub_docs(extension: str) -> dict[str, tuple[ast.AST, str | None]]:
    """Dotted name -> (node, docstring) of the stub's module, functions, classes, members."""
    tree = stub_tree(extension)
    found: dict[str, tuple[ast.AST, str | None]] = {"": (tree, ast.get_docstring(tree))}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            found[node.name] = (node, ast.get_docstring(node))
        elif isinstance(node, ast.ClassDef):
            found[node.name] = (node, ast.get_docstring(node))
            for member in node.body:
                if isinstance(member, ast.FunctionDef):
                    setter = any(".setter" in ast.unparse(d) for d in member.decorator_list)
                    if not setter:  # a property's getter holds its doc
                        found[f"{node.name}.{member.name}"] = (member, ast.get_docstring(member))
    return found


def c_objects(extension: str) -> dict[str, Any]:
    """Dotted name -> every object of the extension that carries a C docstring."""
    module = EXTENSIONS[extension]
    found: dict[str, Any] = {"": module}
    for name, value in vars(module).items():
        if isinstance(value, types.BuiltinFunctionType):
            found[name] = value
        elif isinstance(value, type):
            found[name] = value
            for member, obj in documented_members(value).items():
                found[f"{name}.{member}"] = obj
    return found


def every_c_object() -> list[tuple[str, str]]:
    return [(ext, name) for ext in EXTENSIONS for name in c_objects(ext)]


def test_the_extensions_have_the_objects_the_stubs_describe() -> None:
    core = c_objects("_core")
    for name in ("", "crc32c", "_scan_block", "Reader", "Reader.position", "Writer.write"):
        assert name in core, name
    for name in ("Batch", "Batch.nbytes", "BatchIterator", "_test_before_sync"):
        assert name in core, name
    assert {"", "decode", "decode_columns", "_setup"} <= set(c_objects("_datastore"))


@pytest.mark.parametrize(("extension", "name"), every_c_object())
def test_every_c_docstring_is_the_stubs(extension: str, name: str) -> None:
    stub = stub_docs(extension)
    where = f"{extension}.pyi: {name or 'the module'}"
    assert name in stub, f"{where} is missing: the C docstrings are generated from the stub"
    doc = stub[name][1]
    assert doc, f"{where} has no docstring: the C docstrings are generated from the stub"
    assert doc == own_doc(c_objects(extension)[name]), where


@pytest.mark.parametrize("extension", list(EXTENSIONS))
def test_the_stubs_document_nothing_the_extension_lacks(extension: str) -> None:
    runtime = c_objects(extension)
    documented = {name for name, (_, doc) in stub_docs(extension).items() if doc is not None}
    stale = documented - set(runtime)
    assert not stale, f"{extension}.pyi documents what the extension lacks: {sorted(stale)}"
    slots = {n for n in stub_docs(extension) if n.rpartition(".")[2] in SLOTS}
    bare = {n for n in slots if stub_docs(extension)[n][1] is None}
    assert bare == slots, f"the runtime doc of {slots - bare} is CPython's: leave them bare"
