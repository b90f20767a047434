"""The extensions' C docstrings and parameter lists, generated from their stubs: the stub is the
one source.

setup.py runs this before compiling each extension: it reads the stub (for instance
python/leveldb_log/_core.pyi) with `ast` and writes a header of macros into the build
directory. Docstrings, one string macro per documented object:

    PREFIX_DOC_MODULE            the module's docstring
    PREFIX_DOC_<function>        a module-level function
    PREFIX_DOC_<Class>           a class (with the signature of its __init__, if any)
    PREFIX_DOC_<Class>_<member>  a method, or a property (a getset's doc)

Functions and methods begin with the text signature CPython reads ("name($self, ...)\\n--\\n\\n",
derived from the stub's def), so inspect.signature() and help() show their parameters.

Parameters, for every def that takes any (K is <function>, <Class> for its __init__, or
<Class>_<method>; self left out; not the defs of a Protocol or a property, nor one with *args
or **kwargs), so that the C parsers take their names, order and shape from the stub, as
Argument Clinic's parsers do from its blocks:

    PREFIX_KWLIST_K       {"a", "b", NULL}: PyArg_ParseTupleAndKeywords's keyword list (""
                          for a positional-only parameter): static char *kwlist[] = ...;
    PREFIX_FORMAT_K(a, b) its format, given one converter string per parameter in the stub's
                          order: PREFIX_FORMAT_K("O", "n") is "O|n:name" when b has a default.
                          A stub that gains or loses a parameter changes the arity, so the
                          parse site stops compiling until it reads the new list.
    PREFIX_SIG_K          a pointer to an llpy_sig (csrc/py/args.h, in leveldb_log._core): the
                          names and the counts of positional-only, positional and required
                          parameters, for the hand-written fast-call parsers (llpy_args_fast,
                          llpy_args_count).
    PREFIX_OUT_K(&a, &b)  where llpy_args_fast stores each parameter, in the stub's order, and
                          how many there are (two arguments of llpy_args_fast).

A C file that names a macro the stub does not define fails to compile, naming the macro
(setup.py turns an implicit function declaration into an error, for PREFIX_FORMAT_K(...)).

By hand: python csrc/docstrings.py STUB PREFIX OUTPUT (e.g. python/leveldb_log/_core.pyi
LLPY build/llpy_docs.h). Python 3.9+ and the standard library only.
"""

from __future__ import annotations

import ast
import os
import sys


def _default(node: ast.expr | None) -> str:
    return "" if node is None else "=" + ast.unparse(node)


def _signature(args: ast.arguments, first: str | None) -> str:
    """The text signature of a def's parameters. first: None keeps them all (a function);
    "$self" replaces the first (a method); "" drops it (a class, from its __init__)."""
    positional = [*args.posonlyargs, *args.args]
    defaults = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    params = [a.arg + _default(defaults[i]) for i, a in enumerate(positional)]
    n_posonly = len(args.posonlyargs)
    if first is not None:
        if not positional:
            raise ValueError("a method without self")
        if not first:
            params, n_posonly = params[1:], max(n_posonly - 1, 0)
        else:
            params[0], n_posonly = first, max(n_posonly, 1)
    if n_posonly:
        params.insert(n_posonly, "/")
    if args.vararg is not None:
        params.append("*" + args.vararg.arg)
    elif args.kwonlyargs:
        params.append("*")
    params += [a.arg + _default(args.kw_defaults[i]) for i, a in enumerate(args.kwonlyargs)]
    if args.kwarg is not None:
        params.append("**" + args.kwarg.arg)
    return "(" + ", ".join(params) + ")\n--\n\n"


def _decorators(node: ast.FunctionDef) -> set[str]:
    return {ast.unparse(d) for d in node.decorator_list}


def _class_docs(cls: ast.ClassDef) -> list[tuple[str, str]]:
    """(macro suffix, text) of a class and its documented members."""
    docs = []
    defs = [n for n in cls.body if isinstance(n, ast.FunctionDef)]
    init = [n for n in defs if n.name == "__init__"]
    doc = ast.get_docstring(cls)
    if doc is not None:
        head = cls.name + _signature(init[0].args, "") if init else ""
        docs.append((cls.name, head + doc))
    for node in defs:
        doc = ast.get_docstring(node)
        if doc is None:
            continue
        decorators = _decorators(node)
        if any(d.endswith((".setter", ".deleter")) for d in decorators):
            raise ValueError(f"{cls.name}.{node.name}: the property's getter holds its doc")
        if "property" in decorators:
            docs.append((f"{cls.name}_{node.name}", doc))
        else:
            sig = node.name + _signature(node.args, "$self")
            docs.append((f"{cls.name}_{node.name}", sig + doc))
    return docs


def docstrings(stub: str) -> list[tuple[str, str]]:
    """(macro suffix, docstring as help() shows it) of every documented object of a stub."""
    tree = ast.parse(stub)
    docs = []
    doc = ast.get_docstring(tree)
    if doc is not None:
        docs.append(("MODULE", doc))
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            doc = ast.get_docstring(node)
            if doc is not None:
                docs.append((node.name, node.name + _signature(node.args, None) + doc))
        elif isinstance(node, ast.ClassDef):
            docs += _class_docs(node)
    names = [name for name, _ in docs]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise ValueError(f"two docstrings for {twice}")
    return docs


def _escape(line: str) -> str:
    out = []
    for byte in line.encode("utf-8"):
        c = chr(byte)
        if c in '"\\?':  # "?" too: a "??" would be a trigraph under -std=c11
            out.append("\\" + c)
        elif 32 <= byte < 127:
            out.append(c)
        else:  # octal: a hex escape would swallow the digits after it
            out.append(f"\\{byte:03o}")
    return "".join(out)


def c_string(text: str) -> str:
    """text as C string literals, a line each; ASCII only, so any compiler reads it."""
    lines = text.split("\n")
    pieces = [_escape(line) + "\\n" for line in lines[:-1]]
    if lines[-1] or not pieces:
        pieces.append(_escape(lines[-1]))
    return " \\\n".join(f'    "{p}"' for p in pieces)


class Params:
    """The parameters of a def, self left out, as the C parsers need them."""

    def __init__(self, key: str, name: str, args: ast.arguments, method: bool) -> None:
        positional = [*args.posonlyargs, *args.args]
        self.posonly = len(args.posonlyargs)
        self.required = len(positional) - len(args.defaults)
        if method:
            positional = positional[1:]
            self.posonly, self.required = max(self.posonly - 1, 0), self.required - 1
        self.key, self.name = key, name
        self.positional = len(positional)
        self.names = [a.arg for a in positional] + [a.arg for a in args.kwonlyargs]

    def macros(self, prefix: str) -> list[str]:
        key, names = self.key, self.names
        keywords = ["" if i < self.posonly else n for i, n in enumerate(names)]
        strings = ", ".join(f'"{n}"' for n in keywords)
        pieces = []
        for i, n in enumerate(names):
            if i == min(self.required, len(names)) and i < len(names):
                pieces.append('"|"')
            if i == self.positional:
                pieces.append('"$"')
            pieces.append(n)
        pieces.append(f'":{self.name}"')
        args = ", ".join(names)
        counts = f"{self.posonly}, {self.positional}, {self.required}, {len(names)}"
        return [
            f"#define {prefix}_KWLIST_{key} {{{strings}, NULL}}",
            f"#define {prefix}_FORMAT_{key}({args}) {' '.join(pieces)}",
            f'#define {prefix}_SIG_{key} (&(const llpy_sig){{"{self.name}", \\',
            f"    (const char *const[]){{{strings}, NULL}}, {counts}}})",
            f"#define {prefix}_OUT_{key}({args}) ((PyObject **[]){{{args}}}), {len(names)}",
            "",
        ]


def _is_protocol(cls: ast.ClassDef) -> bool:
    return any(ast.unparse(b) in {"Protocol", "typing.Protocol"} for b in cls.bases)


def _listable(args: ast.arguments) -> bool:
    """Whether a fixed list describes the parameters (*args and **kwargs are parsed by hand)."""
    return args.vararg is None and args.kwarg is None


def parameters(stub: str) -> list[Params]:
    """The parameter lists of a stub's functions, constructors and methods that take any."""
    found = []
    for node in ast.parse(stub).body:
        if isinstance(node, ast.FunctionDef) and _listable(node.args):
            found.append(Params(node.name, node.name, node.args, False))
        elif isinstance(node, ast.ClassDef) and not _is_protocol(node):
            for d in node.body:
                if not isinstance(d, ast.FunctionDef) or _decorators(d) or not _listable(d.args):
                    continue  # properties take no arguments
                key = node.name if d.name == "__init__" else f"{node.name}_{d.name}"
                name = node.name if d.name == "__init__" else d.name
                found.append(Params(key, name, d.args, True))
    return [p for p in found if p.names]


def header(stub_path: str, prefix: str) -> str:
    with open(stub_path, encoding="utf-8") as f:
        stub = f.read()
    try:
        docs = docstrings(stub)
        params = parameters(stub)
    except ValueError as e:
        raise ValueError(f"{stub_path}: {e}") from None
    name = os.path.basename(stub_path)
    guard = f"{prefix}_DOCS_H"
    lines = [
        f"/* Generated from {name} by csrc/docstrings.py at build time: edit the stub. */",
        f"#ifndef {guard}",
        f"#define {guard}",
        "",
    ]
    for suffix, text in docs:
        lines += [f"#define {prefix}_DOC_{suffix} \\", c_string(text), ""]
    lines += ["/* The parameters of each def, self left out (see csrc/docstrings.py). */", ""]
    for p in params:
        lines += p.macros(prefix)
    return "\n".join([*lines, f"#endif /* {guard} */", ""])


def write_header(stub_path: str, prefix: str, out_path: str) -> None:
    """Writes the header, unless it already holds that text (so nothing recompiles)."""
    text = header(stub_path, prefix)
    try:
        with open(out_path, encoding="utf-8") as f:
            if f.read() == text:
                return
    except FileNotFoundError:
        pass
    os.makedirs(os.path.dirname(out_path) or ".", exist_ok=True)
    with open(out_path, "w", encoding="utf-8") as f:
        f.write(text)


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit("usage: python csrc/docstrings.py STUB PREFIX OUTPUT")
    write_header(*sys.argv[1:])
