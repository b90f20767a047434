"""No circles: the files of the binding (csrc/py), of the Datastore extension (csrc/datastore)
and of the package (python/leveldb_log) depend on each other one way only. A C file depends on
another when it names a function (a call, or a pointer to it) or a variable the other defines;
a Python module on another when it imports it, anywhere in the module (in a function too). Two
files that depend on each other, directly or around a loop, are a cycle, printed in full.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable
from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.meta]

ROOT = Path(__file__).resolve().parents[2]

Graph = dict[str, set[str]]

# ---- C: which file names which file's functions ----------------------------------------------

#: Comments, string and character literals: names in them are no calls.
C_NOISE = re.compile(r"/\*.*?\*/|//[^\n]*|\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*'", re.S)
#: A definition at file scope: a function (its signature runs to the line ending in "{") or a
#: variable with an initializer; the name is the identifier before "(" or "=" / "[".
C_FUNCTION = re.compile(
    r"^(?!typedef|#|static\b)[A-Za-z_][^;=(]*?\b(\w+)\s*\([^;]*?\)\s*\{", re.M | re.S
)
C_VARIABLE = re.compile(
    r"^(?!typedef|#|static\b|extern\b)[A-Za-z_][\w \t*]*?\b(\w+)\s*(?:\[\s*\])?\s*=", re.M
)


def c_strip(text: str) -> str:
    """The text without comments and literals (a literal becomes "")."""
    return C_NOISE.sub(lambda m: '""' if m.group(0)[0] in "\"'" else " ", text)


def c_defined(text: str) -> set[str]:
    """The names a .c file defines for other files: its non-static functions and variables."""
    code = c_strip(text)
    return set(C_FUNCTION.findall(code)) | set(C_VARIABLE.findall(code))


def c_graph(files: Iterable[Path], root: Path) -> Graph:
    """File -> the files whose functions or variables it names."""
    texts = {p.relative_to(root).as_posix(): c_strip(p.read_text()) for p in files}
    owner: dict[str, str] = {}
    for name, text in texts.items():
        for symbol in c_defined(text):
            owner[symbol] = name
    graph: Graph = {name: set() for name in texts}
    for name, text in texts.items():
        for word in set(re.findall(r"\b[A-Za-z_]\w*\b", text)):
            other = owner.get(word)
            if other is not None and other != name:
                graph[name].add(other)
    return graph


# ---- Python: which module imports which ------------------------------------------------------


def module_name(path: Path, top: Path) -> str:
    """leveldb_log.cli._common for top/../leveldb_log/cli/_common.py (a package by its name)."""
    parts = list(path.relative_to(top.parent).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def dynamic_import(node: ast.AST) -> bool:
    """importlib.import_module("a.b") (or import_module, __import__) of a name written out."""
    if not isinstance(node, ast.Call) or not node.args:
        return False
    func = node.func
    called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
    first = node.args[0]
    return called in ("import_module", "__import__") and (
        isinstance(first, ast.Constant) and isinstance(first.value, str)
    )


def python_imports(path: Path, name: str, modules: set[str], known: set[str]) -> set[str]:
    """The modules of `modules` that the module `name` (at path) imports, anywhere in it;
    `known` adds the package's modules that are no .py file (extensions, by their stubs)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if dynamic_import(node):
            found.add(node.args[0].value)  # type: ignore[attr-defined]
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package
            for _ in range(node.level - 1):
                base = base.rpartition(".")[0]
            if node.level:
                base = f"{base}.{node.module}" if node.module else base
            else:
                base = node.module or ""
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                # `from . import x` names a module x, or a name of the package itself
                found.add(sub if sub in modules | known else base)
    return {m for m in found if m in modules and m != name}


def python_graph(top: Path) -> Graph:
    """Module -> the modules of the package at top it imports."""
    paths = {module_name(p, top): p for p in sorted(top.rglob("*.py"))}
    modules = set(paths)
    known = {module_name(p, top) for p in top.rglob("*.pyi")}
    return {name: python_imports(path, name, modules, known) for name, path in paths.items()}


# ---- cycles ----------------------------------------------------------------------------------


def strongly_connected(graph: Graph) -> list[list[str]]:
    """Tarjan's components, each sorted (iterative: no recursion limit on a deep chain)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, edges = work[-1]
            for nxt in edges:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(sorted(graph.get(nxt, ())))))
                    break
                if nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    components.append(sorted(component))
    return components


def a_cycle(graph: Graph, component: list[str], start: str) -> list[str]:
    """The shortest loop through start within its component (breadth first), as a path that
    ends where it starts."""
    members = set(component)
    previous: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for nxt in sorted(graph[node] & members):
                if nxt == start:
                    path = [node]
                    while path[-1] != start:
                        path.append(previous[path[-1]])
                    return [*reversed(path), start]
                if nxt not in previous:
                    previous[nxt] = node
                    following.append(nxt)
        frontier = following
    raise AssertionError(f"no loop in the component {component}")


def cycles(graph: Graph) -> list[str]:
    """The loops of files, as "a -> b -> a": in each group of files caught in loops, the
    shortest loop through each file no loop listed before passes through."""
    found = []
    for component in strongly_connected(graph):
        covered: set[str] = set()
        for start in component if len(component) > 1 else ():
            if start not in covered:
                loop = a_cycle(graph, component, start)
                covered.update(loop)
                found.append(" -> ".join(loop))
    return found


def c_files() -> list[Path]:
    return sorted((ROOT / "csrc" / "py").glob("*.c")) + sorted(
        (ROOT / "csrc" / "datastore").rglob("*.c")
    )


# ---- the checks ------------------------------------------------------------------------------


def test_no_two_c_files_of_the_bindings_call_each_other() -> None:
    graph = c_graph(c_files(), ROOT)
    assert len(graph) > 30 and sum(map(len, graph.values())) > 50  # the parser sees calls
    found = cycles(graph)
    assert found == [], "\n".join(found)


def test_no_two_modules_of_the_package_import_each_other() -> None:
    graph = python_graph(ROOT / "python" / "leveldb_log")
    assert "leveldb_log.cli._common" in graph["leveldb_log.cli.cat"]  # the parser sees imports
    found = cycles(graph)
    assert found == [], "\n".join(found)


def write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


def test_a_planted_loop_of_c_calls_is_found(tmp_path: Path) -> None:
    write(
        tmp_path,
        {
            "a.c": "int a_one(int x) {\n    return b_two(x) + 1; /* c_three() */\n}\n",
            "b.c": "static int helper(void) { return 0; }\n"
            "int b_two(int x) {\n    return c_three(x);\n}\n",
            "c.c": 'typedef int (*fn)(int);\nconst char *c_name = "a_one(";\n'
            "int c_three(int x) {\n    fn f = a_one;\n    return f(x);\n}\n",
            "d.c": "int d_four(void) {\n    return a_one(1) + helper();\n}\n",
        },
    )
    graph = c_graph(sorted(tmp_path.glob("*.c")), tmp_path)
    assert graph == {"a.c": {"b.c"}, "b.c": {"c.c"}, "c.c": {"a.c"}, "d.c": {"a.c"}}
    assert cycles(graph) == ["a.c -> b.c -> c.c -> a.c"]
    with pytest.raises(AssertionError, match=r"a\.c -> b\.c -> c\.c -> a\.c"):
        found = cycles(graph)
        assert found == [], "\n".join(found)
    (tmp_path / "c.c").write_text("int c_three(int x) {\n    return x;\n}\n")
    assert cycles(c_graph(sorted(tmp_path.glob("*.c")), tmp_path)) == []


def test_a_planted_import_loop_is_found_in_every_form_of_import(tmp_path: Path) -> None:
    top = tmp_path / "pkg"
    write(
        top,
        {
            "__init__.py": "from .a import run\n",
            "a.py": "from . import b\n\ndef run():\n    return b\n",
            "b.py": "from .sub.c import thing\n",
            "sub/__init__.py": "",
            "sub/c.py": "def thing():\n    from .. import a\n    return a\n",
            "d.py": "import pkg.sub.c\nfrom .sub import c\n",
            "e.py": "from pkg import d\nimport os\n",
            "f.py": "import importlib\n\n\ndef load():\n"
            "    return importlib.import_module('pkg.b')\n",
        },
    )
    graph = python_graph(top)
    assert graph["pkg"] == {"pkg.a"}
    assert graph["pkg.d"] == {"pkg.sub.c"}
    assert graph["pkg.e"] == {"pkg.d"}
    assert graph["pkg.f"] == {"pkg.b"}
    assert cycles(graph) == ["pkg.a -> pkg.b -> pkg.sub.c -> pkg.a"]
    (top / "sub" / "c.py").write_text("from ... import os\n")
    assert cycles(python_graph(top)) == []
    (top / "e.py").write_text("from pkg import d\n")
    (top / "sub" / "c.py").write_text("import pkg.e\n")
    assert cycles(python_graph(top)) == ["pkg.d -> pkg.sub.c -> pkg.e -> pkg.d"]


def test_two_separate_loops_are_each_reported() -> None:
    graph = {"a": {"b"}, "b": {"a"}, "c": {"d"}, "d": {"e"}, "e": {"c", "a"}, "f": {"f"}}
    assert cycles(graph) == ["a -> b -> a", "c -> d -> e -> c"]
