"""The signatures users read are the ones the code parses, from one source.

The C extension's parameters are written once, in its stub (python/leveldb_log/_core.pyi):
csrc/docstrings.py turns each def into the keyword list, format and counts the C parsers use
(LLPY_KWLIST_, LLPY_FORMAT_, LLPY_SIG_, LLPY_OUT_<name>). These tests

- call every callable of the stub (functions, constructors, methods) and every public function
  of the package's modules with each of its parameters by keyword, by position, left out, and
  with a keyword no def has, and fail when the parser disagrees with the signature (a name, a
  kind: positional-only, positional, keyword-only; an arity);
- show that the checker sees a planted mismatch (a stub copy with a renamed keyword, a fake
  callable);
- compile a parse site against the generated header: a wrong arity or a list the stub lacks
  does not compile.

docs/api.md's signatures are checked against the same sources in test_api_doc_signatures.py.
"""

from __future__ import annotations

import ast
import importlib.util
import inspect
import io
import itertools
import os
import re
import shutil
import subprocess
import sysconfig
import types
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import leveldb_log
import leveldb_log._core as core
import pytest
from leveldb_log import datastore, leveldb, pebble, rocksdb

ROOT = Path(__file__).resolve().parents[2]
STUB = Path(leveldb_log.__file__).resolve().parent / "_core.pyi"
POSITIONAL_ONLY = inspect.Parameter.POSITIONAL_ONLY
POSITIONAL = inspect.Parameter.POSITIONAL_OR_KEYWORD
KEYWORD_ONLY = inspect.Parameter.KEYWORD_ONLY
NO_DEFAULT = inspect.Parameter.empty
UNKNOWN = "no_such_parameter"


@dataclass(frozen=True)
class Param:
    name: str
    kind: Any
    default: object = NO_DEFAULT
    annotation: str = ""


def stub_params(node: ast.FunctionDef, method: bool) -> list[Param]:
    """The parameters a stub's def declares (self left out)."""
    args = node.args
    positional = [*args.posonlyargs, *args.args]
    kinds = [POSITIONAL_ONLY] * len(args.posonlyargs) + [POSITIONAL] * len(args.args)
    defaults: list[Any] = [NO_DEFAULT] * (len(positional) - len(args.defaults))
    defaults += list(args.defaults)
    pairs = [*zip(positional, kinds, defaults, strict=True)]
    for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True):
        pairs.append((a, KEYWORD_ONLY, NO_DEFAULT if d is None else d))
    found = [
        Param(
            a.arg,
            kind,
            default if default is NO_DEFAULT else literal(default),
            ast.unparse(a.annotation) if a.annotation is not None else "",
        )
        for a, kind, default in pairs
    ]
    return found[1:] if method else found


@dataclass(frozen=True)
class Unparsed:
    """A stub's default that is no literal: a value for it must be made (VALUES)."""

    text: str


def literal(node: ast.expr) -> object:
    try:
        return ast.literal_eval(node)
    except ValueError:
        return Unparsed(ast.unparse(node))


def stub_defs(text: str) -> dict[str, list[Param]]:
    """Dotted name -> parameters, for every def of a stub that C parses: its functions, and
    the constructors and methods of its classes (Protocols and properties aside)."""
    found = {}
    for node in ast.parse(text).body:
        if isinstance(node, ast.FunctionDef):
            found[node.name] = stub_params(node, method=False)
        elif isinstance(node, ast.ClassDef):
            if any(ast.unparse(b) == "Protocol" for b in node.bases):
                continue
            for d in node.body:
                if isinstance(d, ast.FunctionDef) and not d.decorator_list:
                    name = node.name if d.name == "__init__" else f"{node.name}.{d.name}"
                    found[name] = stub_params(d, method=True)
    return found


def python_params(func: Callable[..., object]) -> list[Param]:
    return [Param(p.name, p.kind, p.default) for p in inspect.signature(func).parameters.values()]


# ---- valid values, made for each parameter ------------------------------------------------


def make_log() -> bytes:
    buf = io.BytesIO()
    with leveldb_log.Writer(buf) as w:
        w.write_many([b"one", b"two"])
    return buf.getvalue()


LOG_BYTES = make_log()


@dataclass
class Maker:
    """Makes the objects calls need in a folder of their own, and cleans up after them."""

    folder: Path
    count: itertools.count[int] = field(default_factory=itertools.count)
    cleanups: list[Callable[[], object]] = field(default_factory=list)

    def path(self) -> str:
        path = self.folder / f"log{next(self.count)}.log"
        path.write_bytes(LOG_BYTES)
        return str(path)

    def fd(self) -> int:
        fd = os.open(self.path(), os.O_RDWR)
        self.cleanups.append(lambda: os.close(fd))
        return fd

    def closing(self, obj: Any) -> Any:
        self.cleanups.append(obj.close)
        return obj

    def clean(self) -> None:
        while self.cleanups:
            self.cleanups.pop()()


def slow_copy_window_now() -> int:
    old = core._slow_copy_window(0)
    core._slow_copy_window(old)
    return old


def encoded_entity() -> bytes:
    return datastore.encode_entity({"a": 1}, datastore.Key([("K", 1)]))


def export_path(m: Maker) -> str:
    from support.datastore_build import write_export

    return str(write_export(m.folder / f"export{next(m.count)}", [("K", [[]])]))


def database_path(m: Maker) -> str:
    folder = m.folder / f"db{next(m.count)}"
    folder.mkdir()
    (folder / "CURRENT").write_bytes(b"MANIFEST-000001\n")
    (folder / "000002.log").write_bytes(LOG_BYTES)
    return str(folder)


# Values for a parameter, by "callable.parameter" or by parameter name; a parameter found in
# neither takes its default.
VALUES: dict[str, Callable[[Maker], object]] = {
    "data": lambda m: b"abc",
    "crc": lambda m: 1,
    "masked": lambda m: 1,
    "source": lambda m: LOG_BYTES,
    "Reader.source": lambda m: m.path(),
    "target": lambda m: m.path(),
    "records": lambda m: [b"a", b"b"],
    "block": lambda m: LOG_BYTES,
    "first_bytes": lambda m: LOG_BYTES,
    "first_block": lambda m: LOG_BYTES,
    "final": lambda m: True,
    "verify_checksums": lambda m: True,
    "dialect": lambda m: "leveldb",
    "fd": lambda m: m.fd(),
    "_tail_end.size": lambda m: len(LOG_BYTES),
    "splits.n": lambda m: 1,
    "path": lambda m: m.path(),
    "_tail_end.path": lambda m: None,
    "_lock_fd.name": lambda m: "a lock",
    "_slow_copy_window.max": lambda m: slow_copy_window_now(),
    "_restore.last": lambda m: None,
    "_restore.dropped": lambda m: 0,
    "_restore.finished": lambda m: False,
    "exc_type": lambda m: None,
    "exc": lambda m: None,
    "tb": lambda m: None,
    "leveldb.decode_write_batch.payload": lambda m: leveldb.encode_write_batch(1, []),
    "rocksdb.decode_write_batch.payload": lambda m: rocksdb.encode_write_batch(1, []),
    "pebble.decode_write_batch.payload": lambda m: pebble.encode_write_batch(1, []),
    "payload": lambda m: bytes.fromhex("020c"),  # a VersionEdit: log number 12
    "edit": lambda m: leveldb.decode_version_edit(bytes.fromhex("020c")),
    "sequence": lambda m: 1,
    "ops": lambda m: [],
    "record": lambda m: encoded_entity(),
    "entity": lambda m: datastore.Entity({"a": 1}, key=datastore.Key([("K", 1)])),
    "encode_entity.key": lambda m: datastore.Key([("K", 1)]),
    "read_export.path": export_path,
    "database_logs.path": database_path,
}

# Values by a parameter's annotation in the stub, for one found in neither VALUES nor with a
# default (a test hook taking a Writer, say); an optional one takes None.
BY_TYPE: dict[str, Callable[[Maker], object]] = {
    "Writer": lambda m: INSTANCES["Writer"](m),
    "Reader": lambda m: INSTANCES["Reader"](m),
    "Buffer": lambda m: LOG_BYTES,
    "bool": lambda m: False,
    "StrPath": lambda m: m.path(),
}

# Arguments a valid call needs beyond the required ones (exactly one of n and size).
EXTRA = {"splits": ("n",)}

# What a valid call of these does: they refuse by design, whatever their arguments.
OUTCOMES: dict[str, tuple[type[BaseException], str]] = {
    "Writer.__reduce__": (TypeError, "cannot pickle a Writer"),
}

# The objects whose methods are called: a fresh one for each call.
INSTANCES: dict[str, Callable[[Maker], object]] = {
    "Writer": lambda m: m.closing(leveldb_log.Writer(m.path(), "a")),
    "Reader": lambda m: m.closing(leveldb_log.Reader(m.path())),
    "Batch": lambda m: next(iter(leveldb_log.Reader(LOG_BYTES).iter_batches())),
    "BatchIterator": lambda m: leveldb_log.Reader(LOG_BYTES).iter_batches(),
}


@dataclass
class Callee:
    """A callable, the signature it is documented with, and how to call it validly."""

    name: str  # "Writer.write", "leveldb.decode_write_batch"
    params: list[Param]
    get: Callable[[Maker], Callable[..., object]]

    def value(self, param: Param, m: Maker) -> object:
        short = self.name.rpartition(".")[2]
        for key in (f"{self.name}.{param.name}", f"{short}.{param.name}", param.name):
            if key in VALUES:
                return VALUES[key](m)
        if param.default is not NO_DEFAULT and not isinstance(param.default, Unparsed):
            return param.default
        if param.annotation in BY_TYPE:
            return BY_TYPE[param.annotation](m)
        if param.annotation.endswith("| None"):
            return None
        raise LookupError(f"{self.name}: make a value for {param.name!r} in VALUES ({__file__})")


def c_callees(stub_text: str) -> list[Callee]:
    callees = []
    for name, params in stub_defs(stub_text).items():
        owner, _, method = name.rpartition(".")
        if not owner:
            callees.append(Callee(name, params, lambda m, name=name: getattr(core, name)))
        else:
            get = lambda m, o=owner, f=method: getattr(INSTANCES[o](m), f)  # noqa: E731
            callees.append(Callee(name, params, get))
    return callees


def python_callees() -> list[Callee]:
    modules: dict[str, types.ModuleType] = {
        "": leveldb_log,
        "leveldb": leveldb,
        "rocksdb": rocksdb,
        "pebble": pebble,
        "datastore": datastore,
    }
    callees = []
    for prefix, module in modules.items():
        for name in module.__all__:
            obj = getattr(module, name)
            if isinstance(obj, types.FunctionType):
                dotted = f"{prefix}.{name}" if prefix else name
                callees.append(Callee(dotted, python_params(obj), lambda m, f=obj: f))
    return callees


# ---- the checker -----------------------------------------------------------------------


@dataclass
class Call:
    args: list[object]
    kwargs: dict[str, object]


def valid_call(callee: Callee, m: Maker, keyword: str | None = None) -> Call:
    """The required arguments (and EXTRA), positionally where they may be; keyword (and the
    positional ones after it) by keyword."""
    call = Call([], {})
    by_keyword = False
    extra = EXTRA.get(callee.name.rpartition(".")[2], ())
    for p in callee.params:
        if p.name == keyword and p.kind != POSITIONAL_ONLY:
            by_keyword = True
        given = p.default is NO_DEFAULT or p.name in extra or p.name == keyword
        if not given:
            continue
        if p.kind == KEYWORD_ONLY or by_keyword or p.name in extra:
            call.kwargs[p.name] = callee.value(p, m)
        else:
            call.args.append(callee.value(p, m))
    return call


def outcome(callee: Callee, m: Maker, call: Call) -> BaseException | None:
    """None when the call is accepted: it returns (an iterator is drained, so that a lazy
    function runs), or raises what OUTCOMES says a valid call of it raises; else what it
    raised."""
    try:
        func = callee.get(m)
        result = func(*call.args, **call.kwargs)
        if isinstance(result, Iterator) and not isinstance(result, leveldb_log.Reader):
            list(result)
        return None
    except Exception as e:
        expected = OUTCOMES.get(callee.name)
        if expected and isinstance(e, expected[0]) and expected[1] in str(e):
            return None
        return e
    finally:
        m.clean()


def refused(error: BaseException | None) -> bool:
    return isinstance(error, TypeError)


def by_position(callee: Callee, m: Maker, extra: bool) -> Call:
    """Every positional parameter by position (the required keyword-only ones by keyword);
    extra: one argument more, the first keyword-only one's value if there is one."""
    positional = [p for p in callee.params if p.kind != KEYWORD_ONLY]
    keyword_only = [p for p in callee.params if p.kind == KEYWORD_ONLY]
    names = {p.name for p in positional}
    call = Call([callee.value(p, m) for p in positional], {})
    call.kwargs = {k: v for k, v in valid_call(callee, m).kwargs.items() if k not in names}
    if extra:
        call.args.append(callee.value(keyword_only[0], m) if keyword_only else None)
        call.kwargs.pop(keyword_only[0].name if keyword_only else "", None)
    return call


def keyword_disagreements(callee: Callee, m: Maker) -> Iterator[str]:
    """Each parameter by keyword: taken, unless the signature says positional-only (checked
    on the last of those, the others by position)."""
    params = callee.params
    posonly = [p for p in params if p.kind == POSITIONAL_ONLY]
    for p in params:
        if p.kind != POSITIONAL_ONLY:
            error = outcome(callee, m, valid_call(callee, m, p.name))
            if error is not None:
                yield f"{callee.name}: keyword {p.name!r} is refused: {error!r}"
        elif p is posonly[-1]:
            call = valid_call(callee, m)
            call.args = [callee.value(q, m) for q in params[: params.index(p)]]
            call.kwargs[p.name] = callee.value(p, m)
            if not refused(outcome(callee, m, call)):
                yield f"{callee.name}: positional-only {p.name!r} is taken by keyword"


def shape_disagreements(callee: Callee, m: Maker) -> Iterator[str]:
    """Positions and arity: every positional parameter by position is taken; one more, a
    keyword no parameter has, or a required one left out is a TypeError."""
    name = callee.name
    error = outcome(callee, m, by_position(callee, m, extra=False))
    if error is not None:
        yield f"{name}: every positional parameter by position: {error!r}"
    if not refused(outcome(callee, m, by_position(callee, m, extra=True))):
        keyword_only = [p.name for p in callee.params if p.kind == KEYWORD_ONLY]
        what = f"keyword-only {keyword_only[0]!r}" if keyword_only else "an extra argument"
        yield f"{name}: takes {what} by position"
    call = valid_call(callee, m)
    call.kwargs[UNKNOWN] = 1
    error = outcome(callee, m, call)
    if not refused(error) or not re.search(f"{UNKNOWN}|keyword arguments", str(error)):
        yield f"{name}: takes a keyword no parameter has ({error!r})"
    required = [p for p in callee.params if p.kind != KEYWORD_ONLY and p.default is NO_DEFAULT]
    if required:
        call = valid_call(callee, m)
        call.args = call.args[: len(required) - 1]
        if not refused(outcome(callee, m, call)):
            yield f"{name}: runs without its required {required[-1].name!r}"
    for p in callee.params:
        if p.kind == KEYWORD_ONLY and p.default is NO_DEFAULT:
            call = valid_call(callee, m)
            del call.kwargs[p.name]
            if not refused(outcome(callee, m, call)):
                yield f"{name}: runs without its required {p.name!r}"


def disagreements(callee: Callee, m: Maker) -> list[str]:
    """Where the callable's parser and its documented parameters disagree (empty: none)."""
    error = outcome(callee, m, valid_call(callee, m))
    if error is not None:
        return [f"{callee.name}: a call with the required arguments raised {error!r}"]
    return [*keyword_disagreements(callee, m), *shape_disagreements(callee, m)]


@pytest.fixture
def maker(tmp_path: Path) -> Iterator[Maker]:
    m = Maker(tmp_path)
    yield m
    m.clean()


STUB_TEXT = STUB.read_text(encoding="utf-8")
C_CALLEES = c_callees(STUB_TEXT)
PY_CALLEES = python_callees()


def test_the_checker_covers_every_parse_site() -> None:
    names = {c.name for c in C_CALLEES}
    assert {"crc32c", "mask_crc", "Writer", "Writer.write", "Writer.write_many"} <= names
    assert {"Reader", "Reader.iter_batches", "Reader._restore", "_scan_block"} <= names
    assert {"Batch.__arrow_c_array__", "Writer.__exit__", "Writer.flush"} <= names
    assert {"scan", "stats", "splits", "leveldb.decode_write_batch"} <= {c.name for c in PY_CALLEES}


@pytest.mark.parametrize("callee", C_CALLEES, ids=lambda c: c.name)
def test_every_c_parser_takes_exactly_the_stubs_parameters(callee: Callee, maker: Maker) -> None:
    assert disagreements(callee, maker) == []


@pytest.mark.parametrize("callee", PY_CALLEES, ids=lambda c: c.name)
def test_every_python_function_takes_exactly_its_signatures_parameters(
    callee: Callee, maker: Maker
) -> None:
    assert disagreements(callee, maker) == []


# ---- planted mismatches: the checker sees them -----------------------------------------


def planted(old: str, new: str) -> dict[str, Callee]:
    assert STUB_TEXT.count(old) == 1, old
    return {c.name: c for c in c_callees(STUB_TEXT.replace(old, new))}


def test_a_stub_copy_with_a_renamed_keyword_is_reported(maker: Maker) -> None:
    callees = planted(
        "def write(self, data: Buffer, /, *, sync: bool | None = None) -> int:",
        "def write(self, data: Buffer, /, *, durable: bool | None = None) -> int:",
    )
    found = disagreements(callees["Writer.write"], maker)
    assert any("keyword 'durable' is refused" in f for f in found), found


def test_a_stub_copy_with_a_keyword_made_positional_only_is_reported(maker: Maker) -> None:
    callees = planted("def crc32c(data: Buffer, value: int = 0)", "def crc32c(data, value=0, /)")
    found = disagreements(callees["crc32c"], maker)
    assert found == ["crc32c: positional-only 'value' is taken by keyword"], found


def test_a_stub_copy_with_a_positional_made_keyword_only_is_reported(maker: Maker) -> None:
    callees = planted(
        '        mode: Literal["w", "a", "x"] = "w",\n        *,\n',
        '        *,\n        mode: Literal["w", "a", "x"] = "w",\n',
    )
    found = disagreements(callees["Writer"], maker)
    assert found == ["Writer: takes keyword-only 'mode' by position"], found


def test_a_fake_callable_against_its_documented_signature(maker: Maker) -> None:
    def parser(data: bytes, *, sink: object = None, **ignored: object) -> None:
        """Takes `sink` where the signature says `sync`, and swallows unknown keywords."""

    stub = [Param("data", POSITIONAL_ONLY), Param("sync", KEYWORD_ONLY, None)]
    found = disagreements(Callee("fake", stub, lambda m: parser), maker)
    assert found == [
        "fake: positional-only 'data' is taken by keyword",
        "fake: takes a keyword no parameter has (None)",
    ], found


def test_a_parser_that_refuses_its_required_argument_is_reported(maker: Maker) -> None:
    stub = [Param("data", POSITIONAL)]
    found = disagreements(Callee("fake", stub, lambda m: lambda: None), maker)
    assert len(found) == 1 and "a call with the required arguments raised" in found[0]


# ---- the generated header: what a parse site may name ----------------------------------


def generated_header(tmp_path: Path) -> Path:
    """The header setup.py writes for leveldb_log._core, written here by the same code."""
    spec = importlib.util.spec_from_file_location("docstrings", ROOT / "csrc" / "docstrings.py")
    assert spec is not None and spec.loader is not None
    docstrings = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(docstrings)
    docstrings.write_header(str(STUB), "LLPY", str(tmp_path / "llpy_docs.h"))
    return tmp_path / "llpy_docs.h"


PARSE_SITES = """\
#include "args.h"
#include "llpy_docs.h"

PyObject *batches(PyObject *args, PyObject *kwds) {
    static char *kwlist[] = LLPY_KWLIST_Reader_iter_batches;
    Py_ssize_t max_records = 1, max_bytes = 1;
    PyObject *offset_type = NULL, *data_type = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kwds, FORMAT, kwlist, &max_records,
                                     &max_bytes, &offset_type, &data_type))
        return NULL;
    Py_RETURN_NONE;
}

PyObject *crc(PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) {
    PyObject *data, *value;
    if (llpy_args_fast(LLPY_SIG_crc32c, args, nargs, kwnames, OUT) < 0)
        return NULL;
    return Py_NewRef(value != NULL ? value : data);
}
"""


def compile_site(tmp_path: Path, **macros: str) -> subprocess.CompletedProcess[str]:
    """Compiles PARSE_SITES as setup.py compiles the extension (no -Werror)."""
    gcc = shutil.which("gcc")
    assert gcc is not None, "gcc is needed (Debian: apt-get install gcc)"
    header = generated_header(tmp_path)
    source = tmp_path / "site.c"
    text = PARSE_SITES
    for name, value in macros.items():
        text = text.replace(name, value)
    source.write_text(text)
    includes = [sysconfig.get_paths()["include"], header.parent, ROOT / "csrc" / "py"]
    includes.append(ROOT / "csrc" / "core")
    flags = ["-std=c11", "-Wall", "-Wextra", "-Werror=implicit-function-declaration"]
    command = [gcc, *flags, "-fsyntax-only", *(f"-I{d}" for d in includes), str(source)]
    return subprocess.run(command, capture_output=True, text=True, check=False)


GOOD = {
    "FORMAT": 'LLPY_FORMAT_Reader_iter_batches("n", "n", "O", "O")',
    "OUT": "LLPY_OUT_crc32c(&data, &value)",
}


def test_a_parse_site_that_follows_the_stub_compiles(tmp_path: Path) -> None:
    good = compile_site(tmp_path, **GOOD)
    assert good.returncode == 0, good.stderr


@pytest.mark.parametrize(
    ("site", "change", "error"),
    [
        ("FORMAT", 'LLPY_FORMAT_Reader_iter_batches("n", "n", "O")', "requires 4 arguments"),
        ("OUT", "LLPY_OUT_crc32c(&data)", "requires 2 arguments"),
        ("FORMAT", 'LLPY_FORMAT_Reader_iter_batchez("n", "n", "O", "O")', "iter_batchez"),
        ("OUT", "LLPY_OUT_crc32d(&data, &value)", "LLPY_OUT_crc32d"),
        ("LLPY_KWLIST_Reader_iter_batches", "LLPY_KWLIST_Reader_batches", "KWLIST_Reader_batches"),
        ("LLPY_SIG_crc32c", "LLPY_SIG_crc32", "LLPY_SIG_crc32"),
    ],
)
def test_a_parse_site_that_disagrees_with_the_stub_does_not_compile(
    tmp_path: Path, site: str, change: str, error: str
) -> None:
    bad = compile_site(tmp_path, **{**GOOD, site: change})
    assert bad.returncode != 0 and error in bad.stderr, bad.stderr


def test_the_generated_lists_follow_the_stubs_kinds(tmp_path: Path) -> None:
    text = generated_header(tmp_path).read_text()
    assert '#define LLPY_KWLIST_Writer_write {"", "sync", NULL}' in text
    assert '#define LLPY_FORMAT_Writer_write(data, sync) data "|" "$" sync ":write"' in text
    assert '#define LLPY_FORMAT_crc32c(data, value) data "|" value ":crc32c"' in text
    assert '{"crc32c", \\\n    (const char *const[]){"data", "value", NULL}, 0, 2, 1, 2})' in text
    assert "#define LLPY_OUT_crc32c(data, value) ((PyObject **[]){data, value}), 2" in text
    # Protocols' defs and property setters have no parse site
    assert "LLPY_KWLIST__ArrowStream" not in text and "KWLIST_Writer__before_sync" not in text
