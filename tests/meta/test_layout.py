"""The house rules a newcomer relies on, checked: the README's map of the code is the code,
functions stay short, the C core includes no Python, the binding exports one prefix, and every
path of the tree a comment or page names exists.
"""

from __future__ import annotations

import ast
import re
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import leveldb_log._core
import pytest

pytestmark = [pytest.mark.slow, pytest.mark.meta]

ROOT = Path(__file__).resolve().parents[2]
LONGEST = 60  # lines; a longer function says why in a comment just above it


def readme_map() -> list[str]:
    """The files the README's Layout section lists, as paths from the repository root."""
    text = (ROOT / "README.md").read_text()
    block = text.split("## Layout", 1)[1].split("```\n", 1)[1].split("```", 1)[0]
    files, folder = [], ""
    for line in block.splitlines():
        name = line.split()[0]
        if not line.startswith(" "):
            folder = name
        else:
            files.append(folder + name)
    return files


def test_the_readme_map_lists_every_file_of_the_code_and_no_other() -> None:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        tracked = sorted(
            str(p.relative_to(ROOT))
            for top in ("csrc", "python")
            for p in (ROOT / top).rglob("*")
            if p.is_file() and "__pycache__" not in p.parts and p.suffix not in {".so", ".pyd"}
        )
    else:
        out = subprocess.run(
            ["git", "ls-files", "csrc", "python"], cwd=ROOT, capture_output=True, text=True
        )
        tracked = sorted(out.stdout.split())
    assert sorted(readme_map()) == tracked


def readme_tests_map() -> list[str]:
    """The folders of tests/ the README's Testing section lists."""
    text = (ROOT / "README.md").read_text()
    block = text.split("## Testing", 1)[1].split("```\n", 1)[1].split("```", 1)[0]
    return [line.split()[0].rstrip("/") for line in block.splitlines()]


def test_the_readme_tests_map_lists_every_folder_of_tests() -> None:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        paths = [
            p.relative_to(ROOT / "tests").as_posix()
            for p in (ROOT / "tests").rglob("*")
            if p.is_file() and not {"__pycache__", ".hypothesis", "build"} & set(p.parts)
        ]
    else:
        out = subprocess.run(
            ["git", "ls-files", "tests"], cwd=ROOT, capture_output=True, text=True, check=True
        )
        paths = [line.split("/", 1)[1] for line in out.stdout.split()]
    folders = {path.split("/", 1)[0] for path in paths if "/" in path}
    assert {"support", "meta", "format"} <= folders
    assert sorted(readme_tests_map()) == sorted(folders)


def test_a_private_header_is_included_by_its_own_files_only() -> None:
    """X_internal.h holds what the files of X ask of each other (the rest of the code sees X as
    opaque): only X*.c, the files of X, include it."""
    private = sorted(ROOT.glob("csrc/**/*_internal.h"))
    assert any(p.name == "writer_internal.h" for p in private)
    stray = []
    for header in private:
        owner = header.name.removesuffix("_internal.h")
        for path in sorted(ROOT.glob("csrc/**/*.[ch]")):
            included = f'#include "{header.name}"' in path.read_text()
            if included and not (path.suffix == ".c" and path.name.startswith(owner)):
                stray.append(f"{path.relative_to(ROOT)} includes {header.name}")
    assert stray == []


#: Structs a header of csrc/py defines with a body that more than one .c file sees, on purpose:
#: values handed between files, or a piece every object embeds, never one object's state.
SHARED_STRUCTS = {
    "llpy_state": "the module state: every file of the binding reads it by design (module.h)",
    "llpy_lock": "the lock both types embed; only lock.c's functions touch its fields",
    "llpy_sig": "a parameter list from the stub: constant data for the fast-call parsers",
    "llpy_reader_blocks": "a value the Reader fills for its test hook",
    "llpy_reader_state": "a value: what pickling reads of a Reader, filled by reader.c",
    "llpy_output_mark": "a value: where a record began, kept by a call to roll back to",
    "llpy_opened": "a value: what reader_open.c makes of tp_init's arguments, for reader.c",
    "llpy_progress": "a value: where reading stands, as the properties and pickling read it",
    "llpy_damage": "a damage report's arguments: pointers to the counters and flags the "
    "reader's records (reader_records.c) let it update, made for each report",
    "ArrowSchema": "the Arrow C data interface: an ABI value the Arrow specification lays out",
    "ArrowArray": "the Arrow C data interface: an ABI value the Arrow specification lays out",
    "ArrowArrayStream": "the Arrow C stream interface: an ABI value the specification lays out",
}


def header_structs(text: str) -> list[str]:
    """Every struct a header defines with a body, whatever its name: `struct name {`, and an
    anonymous `typedef struct {` by its typedef name."""
    named = re.findall(r"^(?:typedef )?struct (\w+) \{", text, re.M)
    anonymous = re.findall(r"^typedef struct \{.*?^\} (\w+);", text, re.M | re.S)
    return named + anonymous


def test_the_struct_finder_sees_every_struct_with_a_body() -> None:
    text = (
        "typedef struct a_b a_b;\nstruct ArrowX {\n    int x;\n};\n"
        "typedef struct cols {\n    int n;\n} cols;\ntypedef struct {\n    int y;\n} anon;\n"
    )
    assert sorted(header_structs(text)) == ["ArrowX", "anon", "cols"]


def included_headers(path: Path, seen: set[str] | None = None) -> set[str]:
    """The headers of csrc/py a file includes, directly or through another header."""
    seen = set() if seen is None else seen
    for name in re.findall(r'^#include "([\w.]+\.h)"', path.read_text(), re.M):
        header = ROOT / "csrc" / "py" / name
        if name not in seen and header.is_file():
            seen.add(name)
            included_headers(header, seen)
    return seen


def test_no_binding_struct_is_defined_in_a_header_more_than_its_owner_includes() -> None:
    """An object's state is a struct its own .c file defines (CPython's way): a struct with a
    body in a header that two .c files include is a shared value named in SHARED_STRUCTS."""
    sources = sorted((ROOT / "csrc" / "py").glob("*.c"))
    reach = {path.name: included_headers(path) for path in sources}
    defined, stray = set(), []
    for header in sorted((ROOT / "csrc" / "py").glob("*.h")):
        for name in header_structs(header.read_text()):
            defined.add(name)
            users = sorted(c for c, headers in reach.items() if header.name in headers)
            if len(users) > 1 and name not in SHARED_STRUCTS:
                stray.append(f"struct {name} in {header.name}, seen by {', '.join(users)}")
    assert stray == []
    assert set(SHARED_STRUCTS) <= defined  # no exemption outlives its struct
    writer = (ROOT / "csrc" / "py" / "writer.c").read_text()
    assert "\nstruct llpy_writer {" in writer
    assert "\nstruct arrow_cols {" in (ROOT / "csrc" / "py" / "arrow_cols.c").read_text()


#: What the stub generates (csrc/docstrings.py: LLPY_KWLIST_<name>, LLPY_FORMAT_<name>,
#: LLPY_SIG_<name>) written by hand instead: a keyword list spelled out, a format string given
#: to PyArg_Parse* as a literal, a list of names ending in NULL, a message of a callable's arity.
HANDWRITTEN_PARSER = re.compile(
    r"kwlist\[\]\s*=(?!\s*LLPY_KWLIST_)"
    r"|=\s*\{\s*\"\w+\"(?:\s*,\s*\"\w+\")*\s*,\s*NULL\s*\}"
    r"|PyArg_Parse\w*\(\s*\w+\s*,\s*(?:\w+\s*,\s*)?\""
    r"|PyArg_UnpackTuple\("
    r"|\"\w+\([^\"]*\) takes (?:\d|no |from |exactly |at )"
)


def handwritten_parsers(folder: Path) -> list[str]:
    """file:line of each parameter list or arity message written by hand in folder's C."""
    found = []
    for path in sorted(folder.glob("*.c")):
        text = path.read_text()
        for match in HANDWRITTEN_PARSER.finditer(text):
            line = text.count("\n", 0, match.start()) + 1
            found.append(f"{path.name}:{line}: {' '.join(match.group(0).split())}")
    return found


def test_every_argument_list_and_arity_message_comes_from_the_stub() -> None:
    assert handwritten_parsers(ROOT / "csrc" / "py") == []


def test_a_planted_hand_written_argument_list_is_found(tmp_path: Path) -> None:
    for path in (ROOT / "csrc" / "py").glob("*.c"):
        shutil.copy(path, tmp_path / path.name)
    arrow = tmp_path / "reader_arrow.c"
    text = arrow.read_text()
    generated = "static char *kwlist[] = LLPY_KWLIST_Reader_to_arrow;"
    assert generated in text
    text = text.replace(generated, 'static char *kwlist[] = {"offset_type", "data_type", NULL};')
    arrow.write_text(re.sub(r'LLPY_FORMAT_Reader_to_arrow\("O",\s*"O"\)', '"|$OO:to_arrow"', text))
    found = handwritten_parsers(tmp_path)
    assert [f.split(":")[0] for f in found] == ["reader_arrow.c"] * 2
    assert "kwlist[] =" in found[0]
    assert re.search(r'PyArg_ParseTupleAndKeywords\( ?args, kwds, "$', found[1])
    planted = tmp_path / "log_options.c"
    text = planted.read_text().replace(
        "llpy_args_count(LLPY_SIG__log_options, nargs) < 0",
        'nargs > 2 && PyErr_Format(PyExc_TypeError, "_log_options() takes 1 or 2 arguments")',
    )
    names = 'static const char *const names[] = {"dialect", "log_number", NULL};\n'
    planted.write_text(text + names)
    found = [f for f in handwritten_parsers(tmp_path) if f.startswith("log_options.c:")]
    assert len(found) == 2 and "takes 1" in found[0] and "NULL}" in found[1]


def c_functions(text: str) -> Iterator[tuple[int, int, str]]:
    """(first line, last line, signature) of each function defined at file scope."""
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if re.match(r"^[A-Za-z_][^;=]*\(", line) and not line.startswith(("typedef", "#")):
            j = i
            while j < len(lines) and not lines[j].rstrip().endswith(("{", ";")):
                j += 1
            if j < len(lines) and lines[j].rstrip().endswith("{"):
                end = lines.index("}", j)
                yield i, end, line
                i = end
        i += 1


def explained(lines: list[str], first: int) -> bool:
    """A comment just above the function says why it is long ("long: ...")."""
    return any("long:" in line for line in lines[max(0, first - 4) : first])


def long_functions() -> list[str]:
    found = []
    for path in sorted(ROOT.glob("csrc/**/*.c")) + sorted(ROOT.glob("bench/**/*.c")):
        lines = path.read_text().splitlines()
        for first, last, signature in c_functions(path.read_text()):
            if last - first + 1 > LONGEST and not explained(lines, first):
                found.append(f"{path.relative_to(ROOT)}:{first + 1}: {signature}")
    for path in sorted(ROOT.glob("python/**/*.py")) + sorted(ROOT.glob("bench/**/*.py")):
        text = path.read_text()
        lines = text.splitlines()
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                first = min([node.lineno, *(d.lineno for d in node.decorator_list)]) - 1
                size = (node.end_lineno or node.lineno) - node.lineno + 1
                if size > LONGEST and not explained(lines, first):
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {node.name}")
    return found


def test_no_function_is_longer_than_sixty_lines_without_a_reason() -> None:
    assert long_functions() == []


def test_the_c_function_finder_sees_functions() -> None:
    text = "static int f(int a,\n          int b) {\n    return a;\n}\nint g(void);\n"
    assert [(a, b) for a, b, _ in c_functions(text)] == [(0, 3)]
    reader = (ROOT / "csrc" / "core" / "log_reader.c").read_text()
    assert sum(1 for _ in c_functions(reader)) > 20


def test_the_binding_exports_one_prefix() -> None:
    nm = shutil.which("nm")
    assert nm is not None, "nm (binutils) is needed to list the extension's symbols"
    out = subprocess.run(
        [nm, "-D", "--defined-only", leveldb_log._core.__file__],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    names = [line.split()[-1] for line in out.splitlines() if line.split()[-2] in "TDBR"]
    assert "PyInit__core" in names
    stray = [n for n in names if not n.startswith(("llog_", "llpy_", "PyInit__core"))]
    assert stray == []


def test_the_datastore_extension_exports_its_own_prefix() -> None:
    import leveldb_log._datastore

    nm = shutil.which("nm")
    assert nm is not None, "nm (binutils) is needed to list the extension's symbols"
    out = subprocess.run(
        [nm, "-D", "--defined-only", leveldb_log._datastore.__file__],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    names = [line.split()[-1] for line in out.splitlines() if line.split()[-2] in "TDBR"]
    assert "PyInit__datastore" in names
    assert [n for n in names if not n.startswith(("llds_", "PyInit__datastore"))] == []


def test_the_meta_checks_and_only_they_are_marked_meta() -> None:
    """`python -m pytest -m meta` runs tests/meta/ and nothing else; every meta check is slow."""
    meta = sorted((ROOT / "tests" / "meta").glob("test_*.py"))
    assert meta
    for path in meta:
        text = path.read_text(encoding="utf-8")
        assert "\npytestmark = [pytest.mark.slow, pytest.mark.meta]\n" in text, path
    for path in behaviour_test_files():
        assert "mark.meta" not in path.read_text(encoding="utf-8"), path


def behaviour_test_files() -> list[Path]:
    tests = ROOT / "tests"
    return sorted(p for p in tests.rglob("test_*.py") if p.parent != tests / "meta")


#: Folders of engine tests: each file starts a real engine (a JVM for Spark, a Ray cluster),
#: which costs seconds before the first assertion, so every file there is in the slow tier.
ENGINE_FOLDERS = ("spark", "ray")


def test_a_slow_behaviour_test_is_the_whole_of_a_test_beside_it() -> None:
    """Outside tests/meta/, `-m slow` marks only whole files that run every case of a behaviour
    test whose sample runs with `python -m pytest` (test_X_full.py or test_X_all.py, beside
    test_X.py), and the engine tests, every one of which is slow."""
    slow = []
    for path in behaviour_test_files():
        text = path.read_text(encoding="utf-8")
        if path.parent.name in ENGINE_FOLDERS and path.parent.parent == ROOT / "tests":
            assert "\npytestmark = pytest.mark.slow\n" in text, path
            continue
        if "mark.slow" not in text:
            continue
        slow.append(path.name)
        assert "\npytestmark = pytest.mark.slow\n" in text, path
        stem, _, tier = path.stem.rpartition("_")
        assert tier in ("full", "all"), path
        assert path.with_name(stem + ".py").is_file(), path
    assert {"test_append_after_damage_full.py", "test_crash_states_all.py"} <= set(slow)


def test_every_test_file_sits_in_a_subject_folder() -> None:
    """tests/ holds conftest.py and folders: the behaviour tests by subject, support/ for what
    they share, meta/ for the checks of the tree."""
    tests = ROOT / "tests"
    assert sorted(p.name for p in tests.glob("*.py")) == ["conftest.py"]
    assert not list((tests / "support").glob("test_*.py"))


#: A path of the tree named in a comment, docstring or page: tests/..., csrc/... and so on, not
#: a prefix that a shell variable or a glob completes (tests/fuzz/fuzz_$h.c, csrc/core/*.c).
PATH_MENTION = re.compile(
    r"(?<![\w/.$-])((?:tests|csrc|python|bench|docs|examples)/[\w./-]*\w)(?![\w$*]|[/.-][\w$*])"
)
#: Named paths that are no file of the tree, and why. Placeholders in capitals (test_NAME.c)
#: and build output (a build/ folder) are left out by rule.
NAMED_ELSEWHERE = {
    "bench/run.py": "bench/RESULTS.md, a log of earlier runs, names the command of its day",
    "docs/x.md": "a page tests/docs/test_docs.py makes up",
}


def mentioned_paths(text: str) -> Iterator[tuple[int, str]]:
    """(line, path) of each path of the tree the text names, but placeholders and build output."""
    for number, line in enumerate(text.splitlines(), 1):
        for match in PATH_MENTION.finditer(line):
            path = match.group(1)
            if not re.search(r"[A-Z]{3,}", path) and "build" not in path.split("/"):
                yield number, path


def test_the_path_finder_sees_paths_and_skips_placeholders() -> None:
    text = "see tests/c/harness.h, (tests/support/model.py)\ntests/c/test_NAME.c `fuzz_$h` "
    text += "tests/fuzz/fuzz_$h.c tests/fuzz/build/x csrc/py/"
    assert list(mentioned_paths(text)) == [
        (1, "tests/c/harness.h"),
        (1, "tests/support/model.py"),
        (2, "csrc/py"),
    ]


def test_every_path_the_tree_names_exists() -> None:
    """A comment or page that names a file of the tree names one that is there: from the root,
    or from tests/ in what the README and docs say of the tests (docs/test_docs.py)."""
    tops = ["csrc", "python", "tests", "bench", "docs", "examples", ".ci"]
    tops += ["README.md", "RELIABILITY.md", "setup.py", "pyproject.toml", "MANIFEST.in"]
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        files = [
            p
            for top in tops
            for p in ([ROOT / top] if (ROOT / top).is_file() else (ROOT / top).rglob("*"))
        ]
        skip = {"__pycache__", ".hypothesis", "build"}
        files = [p for p in files if p.is_file() and not skip & set(p.parts)]
    else:
        out = subprocess.run(
            ["git", "ls-files", *tops], cwd=ROOT, capture_output=True, text=True, check=True
        )
        files = [ROOT / line for line in out.stdout.split()]
    missing = []
    for path in files:
        try:
            text = path.read_text(encoding="utf-8")
        except (UnicodeDecodeError, FileNotFoundError):
            continue
        name = path.relative_to(ROOT).as_posix()
        for number, named in mentioned_paths(text):
            there = (ROOT / named).exists() or (ROOT / "tests" / named).exists()
            if not there and named not in NAMED_ELSEWHERE:
                missing.append(f"{name}:{number}: {named}")
    assert len(files) > 100
    assert missing == []
