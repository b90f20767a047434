"""docs/api.md's signatures are the code's: every signature the page writes (a signature
block, the first column of a table of names or methods, a bullet that opens with one) names
the parameters, their kinds, defaults and return type that the stub (_core.pyi, for the C
extension) or the Python definition declares, so the page cannot drift from what the parsers
take (tests/api/test_signatures.py). A mismatch is reported with the signature to write."""

from __future__ import annotations

import ast
import importlib
import inspect
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import leveldb_log
import pytest

ROOT = Path(__file__).resolve().parents[2]
API = ROOT / "docs" / "api.md"
STUB = Path(leveldb_log.__file__).resolve().parent / "_core.pyi"
SIGNATURE = re.compile(r"^(?:leveldb_log\.)?([A-Za-z_][\w.]*)\((.*)\)(?:\s*->\s*(.+))?$", re.S)
# The tables whose first column lists names or methods (not, say, the durability table).
TABLES = ("method", "name")


@dataclass(frozen=True)
class Written:
    """A signature as the page writes it."""

    line: int
    section: str  # the ## heading it is under
    text: str


def code_spans(text: str) -> list[str]:
    return re.findall(r"`([^`]+)`", text)


def fenced(lines: list[str], i: int, previous_fence: str | None) -> tuple[list[Written], int]:
    """The signatures of the fence opening at lines[i] (one without a language that does not
    show a python example's output), and the index past its end."""
    tag, body, j = lines[i][3:].strip(), [], i + 1
    while not lines[j].startswith("```"):
        body.append((j + 1, lines[j]))
        j += 1
    if tag or previous_fence == "python":
        return [], j + 1
    found, pending, start = [], "", 0
    for number, line in body:
        if not pending:
            start = number
        pending = f"{pending} {line.strip()}" if pending else line.strip()
        if pending.count("(") == pending.count(")"):
            found.append(Written(start, "", re.sub(r"\s+", " ", pending)))
            pending = ""
    return found, j + 1


def written_signatures(text: str) -> Iterator[Written]:
    lines, section, table_kind, previous_fence, i = text.splitlines(), "", "", None, 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("```"):
            found, end = fenced(lines, i, previous_fence)
            previous_fence = line[3:].strip() or previous_fence
            for w in found:
                if SIGNATURE.match(w.text):
                    yield Written(w.line, section, w.text)
            i = end
            continue
        if line.strip():
            previous_fence = None if not line.startswith("```") else previous_fence
        if line.startswith("## "):
            section = line[3:].strip()
        spans: list[str] = []
        if line.startswith("|") and not lines[i - 1].startswith("|"):
            table_kind = line.split("|")[1]
        elif line.startswith("|") and not line.startswith("|---"):
            if any(k in table_kind for k in TABLES):
                spans = code_spans(line.split("|")[1])
        opening = re.match(r"^- ((?:`[^`]+`(?:,? (?:and )?)?)+):", line)
        if opening:
            spans = code_spans(opening.group(1))
        for span in spans:
            if SIGNATURE.match(span):
                yield Written(i + 1, section, span)
        i += 1


# ---- what the code declares --------------------------------------------------------------


@dataclass(frozen=True)
class Declared:
    params: list[tuple[str, Any, object]]  # (name, kind, default or NO_DEFAULT)
    returns: str | None  # None: no return type to compare ("Any" says nothing either)
    fields: bool = False  # a class made from its fields: the page may list their names alone

    def render(self, name: str) -> str:
        """The signature as the page should write it."""
        parts = []
        for n, kind, default in self.params:
            if kind == inspect.Parameter.KEYWORD_ONLY and "*" not in parts:
                parts.append("*")
            parts.append(n if default is NO_DEFAULT else f"{n}={default!r}")
            if kind == inspect.Parameter.POSITIONAL_ONLY:
                last = len(parts)
        if any(kind == inspect.Parameter.POSITIONAL_ONLY for _, kind, _ in self.params):
            parts.insert(last, "/")
        returns = f" -> {self.returns}" if self.returns else ""
        return f"{name}({', '.join(parts)}){returns}"


NO_DEFAULT = inspect.Parameter.empty


def value(text: str) -> object:
    """A default as the page or the stub writes it: a literal, or arithmetic on literals."""
    return eval(text, {"__builtins__": {}})  # (the text is our own files')


def params_of(args: ast.arguments) -> list[tuple[str, Any, object]]:
    positional = [*args.posonlyargs, *args.args]
    kinds = [inspect.Parameter.POSITIONAL_ONLY] * len(args.posonlyargs)
    kinds += [inspect.Parameter.POSITIONAL_OR_KEYWORD] * len(args.args)
    defaults: list[object] = [NO_DEFAULT] * (len(positional) - len(args.defaults))
    defaults += [value(ast.unparse(d)) for d in args.defaults]
    params = list(zip([a.arg for a in positional], kinds, defaults, strict=True))
    for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True):
        default = NO_DEFAULT if d is None else value(ast.unparse(d))
        params.append((a.arg, inspect.Parameter.KEYWORD_ONLY, default))
    return params


def from_def(node: ast.FunctionDef, method: bool) -> Declared:
    params = params_of(node.args)
    returns = ast.unparse(node.returns) if node.returns is not None else None
    return Declared(params[1:] if method else params, None if returns == "None" else returns)


def stub_declared() -> dict[str, Declared]:
    found = {}
    for node in ast.parse(STUB.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.FunctionDef):
            found[node.name] = from_def(node, method=False)
        elif isinstance(node, ast.ClassDef):
            for d in node.body:
                if isinstance(d, ast.FunctionDef) and not d.decorator_list:
                    name = node.name if d.name == "__init__" else f"{node.name}.{d.name}"
                    found[name] = from_def(d, method=True)
    return found


STUB_DECLARED = stub_declared()


def python_declared(obj: Any) -> Declared:
    signature = inspect.signature(obj)
    params = [(p.name, p.kind, p.default) for p in signature.parameters.values()]
    returns = signature.return_annotation
    shown = None if returns in (inspect.Signature.empty, "Any") else str(returns)
    if isinstance(obj, type):
        return Declared(params, None, fields=True)
    return Declared(params, shown)


def module_of(section: str) -> str:
    """The module whose names a ## section lists."""
    match = re.match(r"leveldb_log\.(\w+)", section)
    return f"leveldb_log.{match.group(1)}" if match else "leveldb_log"


def declared(section: str, name: str) -> tuple[str, Declared] | None:
    """(qualified name, what the code declares) of a name the page writes in section."""
    if section in {"Writer", "Reader"} and f"{section}.{name}" in STUB_DECLARED:
        return f"{section}.{name}", STUB_DECLARED[f"{section}.{name}"]
    module = module_of(section)
    if module == "leveldb_log" and name in STUB_DECLARED:
        return name, STUB_DECLARED[name]
    obj = getattr(importlib.import_module(module), name, None)
    if obj is None or not callable(obj):
        return None
    return f"{module}.{name}", python_declared(obj)


def page_params(text: str) -> tuple[list[tuple[str, Any, object]], bool]:
    """The parameters a written signature lists, and whether it ends in "..." (a prefix)."""
    partial = text.rstrip().endswith("...")
    text = re.sub(r",?\s*\.\.\.\s*$", "", text)
    text = re.sub(r"\b(\d+) MiB\b", r"\1 * 1048576", text)  # the page's short sizes
    node = ast.parse(f"def f({text}): pass").body[0]
    assert isinstance(node, ast.FunctionDef)
    return params_of(node.args), partial


def mismatch(w: Written) -> str | None:
    match = SIGNATURE.match(w.text)
    assert match is not None
    name, params_text, returns = match.groups()
    found = declared(w.section, name)
    if found is None:
        return f"docs/api.md:{w.line}: {w.text!r} names nothing the package has"
    qualified, code = found
    if params_text.strip() == "...":
        return None
    params, partial = page_params(params_text)
    want = code.params[: len(params)] if partial else code.params
    if code.fields:  # Put(key, value): a default the page leaves out is not compared
        params = [
            (n, k, want[i][2] if i < len(want) and d is NO_DEFAULT else d)
            for i, (n, k, d) in enumerate(params)
        ]
    wrong_return = returns is not None and code.returns and returns.strip() != code.returns
    if params != want or wrong_return:
        return (
            f"docs/api.md:{w.line}: {w.text!r} is not {qualified}'s signature: "
            f"write {code.render(name)!r}"
        )
    return None


WRITTEN = list(written_signatures(API.read_text(encoding="utf-8")))


def test_the_page_writes_the_signatures_of_the_main_callables() -> None:
    names = {(w.section, SIGNATURE.match(w.text).group(1)) for w in WRITTEN}  # type: ignore[union-attr]
    for wanted in [
        ("Writer", "write"),
        ("Writer", "write_many"),
        ("Checksums", "crc32c"),
        ("Checksums", "mask_crc"),
        ("splits", "splits"),
        ("scan and PhysicalRecord", "scan"),
        ("stats: a log's figures", "stats"),
        ("leveldb_log.rocksdb: RocksDB's records", "decode_write_batch"),
    ]:
        assert wanted in names, wanted


@pytest.mark.parametrize("written", WRITTEN, ids=lambda w: f"{w.line}:{w.text[:40]}")
def test_every_signature_on_the_page_is_the_codes(written: Written) -> None:
    assert mismatch(written) is None, mismatch(written)


def test_a_signature_that_drifted_is_reported() -> None:
    drifted = Written(1, "Writer", "write_many(iterable, *, sync=None) -> int")
    assert mismatch(drifted) == (
        "docs/api.md:1: 'write_many(iterable, *, sync=None) -> int' is not Writer.write_many's "
        "signature: write 'write_many(records, /, *, sync=None) -> int'"
    )
    for wrong in ("crc32c(data, value=1) -> int", "crc32c(data, *, value=0) -> int"):
        assert mismatch(Written(1, "Checksums", wrong)) is not None, wrong
    assert mismatch(Written(1, "Checksums", "crc32c(data, value=0) -> bytes")) is not None
    assert mismatch(Written(1, "Checksums", "crc32c(data, value=0) -> int")) is None


PAGE = """\
## Writer

| method / property | does |
|---|---|
| `write(data, /, *, sync=None) -> int` | a signature |
| `with Writer(...) as w:` | not one |

| when `write()` returned, with | kept |
|---|---|
| `flush()` | a table of something else |

## splits

```
splits(source, n=None,
       size=None) -> list
```

```python
print(splits(b""))
```

```
splits(b'')
```

- `crc32c(data, value=0) -> int`: a bullet that opens with signatures;
  `crc32c(b"x")` in its text is a call.
"""


def test_the_page_reader_finds_signatures_where_the_page_writes_them() -> None:
    assert [(w.line, w.section, w.text) for w in written_signatures(PAGE)] == [
        (5, "Writer", "write(data, /, *, sync=None) -> int"),
        (15, "splits", "splits(source, n=None, size=None) -> list"),
        (27, "splits", "crc32c(data, value=0) -> int"),
    ]
