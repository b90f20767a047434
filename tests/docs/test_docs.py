"""Every example in README.md and docs/*.md runs, and prints what the page shows.

One test per page. The page's examples run in order, in a fresh temporary directory (the
working directory, where the files they make land; it starts with a copy of `examples/`, as
in a checkout), in one child process per page (pages run in parallel, as pytest's workers
allow). Each python block is a script: it is written to a file of its own (outside the
working directory) and run as `python FILE` runs it (`runpy.run_path` with the name
`__main__`), so that what a pasted script meets, the examples meet: `multiprocessing` and
Dask workers that spawn import that file again as their main module, and an example that
starts workers without `if __name__ == "__main__":` fails. A block starts with the names
the page's earlier blocks left (as a reader who pasted them before it has them), and leaves
its own to the next.

The rules a page follows:

- A ```python block is executed. If a plain ``` block follows it (blank lines only between),
  that block is the block's expected standard output, compared exactly after the masks of
  `MASKS`. Standard error is not compared (a `CorruptionWarning` may go there).
- A ```console block is a shell session: each `$ command` (continued on lines that start
  with `> `, or after a line that ends with a backslash) runs under bash, in the same
  directory, with this Python's `bin` first on PATH (so `python3` and `leveldb-log` are
  the installed ones). What follows, up to the next `$`, is its expected output: standard
  output and standard error together, as a user sees them in a terminal. Each command must
  exit with status 0; a command expected to fail shows its status (`...; echo "exit $?"`).
- A ```sh block is left alone: it is commands for the reader (installing, CI), not an
  example. Anything that is an example is a python or console block.
- `<!-- not executed: REASON -->` on the line before a block skips it, for what cannot run
  here (a Spark cluster); `NOT_EXECUTED` pins how many each page has.
"""

from __future__ import annotations

import json
import os
import re
import runpy
import shutil
import subprocess
import sys
import tempfile
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
ALL_PAGES = [*sorted((ROOT / "docs").glob("*.md")), ROOT / "README.md"]
# The pages whose examples start an engine (a JVM for Spark, a Ray cluster): they run with the
# engine tests, in the slow tier (tests/spark/test_spark_docs.py, tests/ray/test_ray_docs.py).
ENGINE_PAGES = {"spark.md", "ray.md"}
PAGES = [page for page in ALL_PAGES if page.name not in ENGINE_PAGES]

# Blocks marked `<!-- not executed: ... -->`, per page: adding one must change this table.
# spark.md: the cluster recipe's three blocks, which tests/spark/test_recipe.py runs on a
# standalone cluster.
NOT_EXECUTED: dict[str, int] = {"spark.md": 3}

# What legitimately differs between runs, masked on both sides before comparing:
MASKS = [
    # a duration printed by an example or the demo: "in 0.020 s"
    (re.compile(r"\b\d+\.\d+ s\b"), "N.NNN s"),
    # a directory made by tempfile (the demo's default output directory): under the temporary
    # folder of this run, or under /tmp, as the pages show it
    (re.compile(f"(?:{re.escape(tempfile.gettempdir())}|/tmp)" + r"/tmp\w+"), "/TMPDIR"),
    # the CRC-32C code the CPU gets (docs/api.md "Checksums"): "CRC-32C: sse4.2"
    (re.compile(r"(CRC-32C: )[\w.+-]+"), r"\1IMPL"),
    # an object's address in a repr: "<... object at 0x7f...>"
    (re.compile(r" at 0x[0-9a-f]+>"), " at 0x...>"),
]

NOT_EXECUTED_MARK = re.compile(r"^<!-- not executed: .+ -->$")
FENCE = re.compile(r"^```(\w*)\s*$")


def mask(text: str) -> str:
    """The text with every mask of MASKS applied."""
    for pattern, replacement in MASKS:
        text = pattern.sub(replacement, text)
    return text


@dataclass
class Example:
    """One block to run: python source, or console commands, with what it must print."""

    kind: str  # "python" or "console"
    line: int  # the fence's line number in the page (1-based)
    source: str = ""  # python
    expected: str | None = None  # python: the output block, if any
    commands: list[tuple[str, str]] = field(default_factory=list)  # console: (command, output)


@dataclass
class Page:
    """The examples of one page, and how many blocks it marks as not executed."""

    examples: list[Example]
    not_executed: int


def fenced_blocks(text: str) -> list[tuple[str, int, list[str], list[str]]]:
    """(language, fence line, body lines, the lines between the previous block and this)."""
    lines = text.splitlines()
    blocks = []
    i, last_end = 0, 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        end = i + 1
        while end < len(lines) and lines[end].rstrip() != "```":
            end += 1
        blocks.append((m.group(1), i + 1, lines[i + 1 : end], lines[last_end:i]))
        i = last_end = end + 1
    return blocks


def console_commands(body: list[str]) -> list[tuple[str, str]]:
    """A console block's `$ command` lines (with continuations) and the output of each."""
    commands: list[tuple[str, list[str]]] = []
    i = 0
    while i < len(body):
        line = body[i]
        if not line.startswith("$ "):
            if not commands:
                raise ValueError(f"console block: output before any command: {line!r}")
            commands[-1][1].append(line)
            i += 1
            continue
        command = [line[2:]]
        i += 1
        while i < len(body) and (command[-1].endswith("\\") or body[i].startswith("> ")):
            command.append(body[i][2:] if body[i].startswith("> ") else body[i])
            i += 1
        commands.append(("\n".join(command), []))
    return [(c, "".join(o + "\n" for o in out)) for c, out in commands]


def parse(page: Path) -> Page:
    """The examples of a page, in order, per the rules of the module docstring."""
    examples: list[Example] = []
    skipped = 0
    previous: Example | None = None
    for lang, line, body, before in fenced_blocks(page.read_text(encoding="utf-8")):
        between = [b for b in before if b.strip()]
        follows = previous is not None and not between
        if between and NOT_EXECUTED_MARK.match(between[-1].strip()):
            skipped += 1
            previous = None
            continue
        if lang == "" and follows and previous is not None and previous.kind == "python":
            previous.expected = "".join(b + "\n" for b in body)
            previous = None
            continue
        previous = None
        if lang == "python":
            previous = Example("python", line, source="\n".join(body) + "\n")
            examples.append(previous)
        elif lang == "console":
            examples.append(Example("console", line, commands=console_commands(body)))
    return Page(examples, skipped)


# ---------------------------------------------------------------------------
# the child process: runs a page's examples, writes what each printed
# ---------------------------------------------------------------------------


def run_python(source: str, script: Path, namespace: dict[str, Any]) -> str:
    """Runs source as the script ``script`` (written there first), as ``python script``
    would, starting from the names in namespace, which then receives the names it left;
    returns what it wrote to file descriptor 1."""
    script.write_text(source, encoding="utf-8")
    with tempfile.TemporaryFile() as capture:
        sys.stdout.flush()
        saved = os.dup(1)
        os.dup2(capture.fileno(), 1)
        try:
            left = runpy.run_path(str(script), init_globals=namespace, run_name="__main__")
        finally:
            sys.stdout.flush()
            os.dup2(saved, 1)
            os.close(saved)
        namespace.update((k, v) for k, v in left.items() if not k.startswith("__"))
        capture.seek(0)
        return capture.read().decode("utf-8", "backslashreplace")


def run_console(command: str) -> tuple[str, int]:
    """Runs one command under bash: its output (stdout and stderr merged) and status."""
    env = {
        **os.environ,
        "PATH": os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", ""),
        "LC_ALL": "C.UTF-8",
        "COLUMNS": "80",
    }
    result = subprocess.run(
        ["bash", "-c", command],
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env=env,
        check=False,
        timeout=300,
    )
    return result.stdout.decode("utf-8", "backslashreplace"), result.returncode


def child(examples_json: str, results_json: str, scripts: str) -> None:
    """Runs the examples listed in examples_json, each python block as a script in the
    folder scripts; writes their outputs to results_json."""
    examples = json.loads(Path(examples_json).read_text(encoding="utf-8"))
    namespace: dict[str, Any] = {}
    results: list[dict[str, Any]] = []
    for example in examples:
        result: dict[str, Any] = {"line": example["line"]}
        results.append(result)
        began = time.perf_counter()
        if example["kind"] == "python":
            try:
                script = Path(scripts) / f"{example['script']}.py"
                result["output"] = run_python(example["source"], script, namespace)
            except BaseException:
                result["error"] = traceback.format_exc()
                break
            finally:
                result["seconds"] = time.perf_counter() - began
        else:
            result["commands"] = [run_console(c) for c, _ in example["commands"]]
            result["seconds"] = time.perf_counter() - began
    Path(results_json).write_text(json.dumps(results), encoding="utf-8")


# ---------------------------------------------------------------------------
# the tests
# ---------------------------------------------------------------------------


def run_page(
    page: Path, workdir: Path
) -> tuple[Page, subprocess.CompletedProcess[str], list[dict[str, Any]]]:
    """Runs a page's examples in workdir: the parse, the runner's process, and each
    example's results (none if the runner failed)."""
    parsed = parse(page)
    shutil.copytree(ROOT / "examples", workdir / "examples")
    listing = workdir.parent / f"{workdir.name}-examples.json"
    results = workdir.parent / f"{workdir.name}-results.json"
    scripts = workdir.parent / f"{workdir.name}-scripts"  # not in the examples' folder
    scripts.mkdir()
    stem = page.stem.replace("-", "_").lower()
    listing.write_text(
        json.dumps([{**e.__dict__, "script": f"{stem}_line{e.line}"} for e in parsed.examples]),
        encoding="utf-8",
    )
    done = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), str(listing), str(results), str(scripts)],
        cwd=workdir,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    if done.returncode != 0:
        return parsed, done, []
    return parsed, done, json.loads(results.read_text(encoding="utf-8"))


def differences(page: Path, parsed: Page, results: list[dict[str, Any]]) -> list[str]:
    """Every way the examples' results differ from what the page shows."""
    name = page.relative_to(ROOT).as_posix()
    problems = []
    for example, result in zip(parsed.examples, results, strict=False):  # may stop early
        where = f"{name}:{example.line}"
        if "error" in result:
            problems.append(f"{where}: raised\n{result['error']}")
        elif example.kind == "python":
            if example.expected is not None and mask(result["output"]) != mask(example.expected):
                problems.append(f"{where}: printed\n{result['output']}")
        else:
            ran = zip(example.commands, result["commands"], strict=True)
            for (command, expected), (output, status) in ran:
                if mask(output) != mask(expected) or status != 0:
                    problems.append(f"{where}: $ {command}\nexit {status}, printed\n{output}")
    if len(results) < len(parsed.examples) and not problems:
        problems.append(f"{name}: only {len(results)} of {len(parsed.examples)} examples ran")
    return problems


def test_the_parser_finds_outputs_commands_and_marks(tmp_path: Path) -> None:
    page = tmp_path / "p.md"
    page.write_text(
        "```python\nprint(1)\n```\n\n```\n1\n```\n"
        "```sh\nrm -rf /\n```\n"
        "```console\n$ echo a \\\n  b\na b\n$ for i in 1; do\n>   echo $i\n> done\n1\n"
        "$ true\n```\n"
        "<!-- not executed: needs a cluster -->\n```python\nimport pyspark\n```\n\n```\nx\n```\n"
        "```python\nx = 2\n```\ntext\n```\nnot an output\n```\n",
        encoding="utf-8",
    )
    parsed = parse(page)
    assert parsed.not_executed == 1
    assert [(e.kind, e.line, e.expected) for e in parsed.examples] == [
        ("python", 1, "1\n"),
        ("console", 11, None),
        ("python", 29, None),
    ]
    assert parsed.examples[1].commands == [
        ("echo a \\\n  b", "a b\n"),
        ("for i in 1; do\n  echo $i\ndone", "1\n"),
        ("true", ""),
    ]


def test_the_masks_are_few_and_specific() -> None:
    line = "read in 0.009 s (CRC-32C: sse4.2+pclmul) <X object at 0x7f3a>"
    assert mask(line) == "read in N.NNN s (CRC-32C: IMPL) <X object at 0x...>"
    assert mask("0.5 GB/s, offset 0x10, portable") == "0.5 GB/s, offset 0x10, portable"


def test_a_wrong_output_or_a_failing_command_is_a_difference(tmp_path: Path) -> None:
    page = ROOT / "docs" / "x.md"  # only named, never read
    parsed = Page(
        [
            Example("python", 1, "print(2)\n", expected="3\n"),
            Example("console", 5, commands=[("false", ""), ("echo b", "b\n")]),
        ],
        0,
    )
    results = [
        {"line": 1, "output": "2\n"},
        {"line": 5, "commands": [("", 1), ("b\n", 0)]},
    ]
    assert [p.split("\n")[0] for p in differences(page, parsed, results)] == [
        "docs/x.md:1: printed",
        "docs/x.md:5: $ false",
    ]


_SPAWNING = """```python
import concurrent.futures
import multiprocessing

def square(x):
    return x * x
{body}
```

```
[9] 4
```
"""
_UNGUARDED = """
spawning = multiprocessing.get_context("spawn")
with concurrent.futures.ProcessPoolExecutor(1, mp_context=spawning) as pool:
    print(list(pool.map(square, [3])), two)
"""


@pytest.mark.parametrize("guarded", [False, True])
def test_an_example_runs_as_a_script_so_spawned_workers_import_it(
    tmp_path: Path, guarded: bool
) -> None:
    """A worker that spawns imports the script again: without `if __name__ == "__main__":`
    it starts workers while it starts, and the pool breaks, as it would for a reader who
    pasted the example into a script. A block sees the names of the blocks before it."""
    body = _UNGUARDED
    if guarded:
        body = "\nif __name__ == '__main__':" + body.replace("\n", "\n    ").rstrip(" ")
    page = tmp_path / "page.md"
    page.write_text("```python\ntwo = 4\n```\n\n" + _SPAWNING.format(body=body))
    (tmp_path / "work").mkdir()
    parsed, done, results = run_page(page, tmp_path / "work")
    assert done.returncode == 0, done.stderr
    assert [r.get("output") for r in results][:1] == [""]
    if guarded:
        assert {**results[1], "seconds": 0} == {"line": 5, "output": "[9] 4\n", "seconds": 0}
        assert parsed.examples[1].expected == "[9] 4\n"
    else:
        assert "BrokenProcessPool" in results[1]["error"], results


def test_every_example_block_is_python_console_or_sh() -> None:
    for page in ALL_PAGES:
        for lang, line, _, _ in fenced_blocks(page.read_text(encoding="utf-8")):
            assert lang in {"", "python", "console", "sh"}, f"{page.name}:{line}: {lang}"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_every_example_of_the_page_runs_and_prints_what_it_shows(
    page: Path, tmp_path: Path
) -> None:
    check_page(page, tmp_path)


def check_page(page: Path, tmp_path: Path) -> None:
    """Runs every example of the page and asserts each printed what the page shows."""
    workdir = tmp_path / "work"
    workdir.mkdir()
    parsed, done, results = run_page(page, workdir)
    assert done.returncode == 0, done.stdout + done.stderr
    # What each example took (pytest -rP shows it): where a page's time goes.
    print("\n".join(f"{page.name}:{r['line']}: {r['seconds']:.1f} s" for r in results))
    expected = NOT_EXECUTED.get(page.name, 0)
    assert parsed.not_executed == expected, (
        f"{page.name}: {parsed.not_executed} marked not executed, NOT_EXECUTED says {expected}"
    )
    problems = differences(page, parsed, results)
    assert not problems, "\n\n".join(problems) + "\n--- stderr:\n" + done.stderr[-3000:]


if __name__ == "__main__":
    child(sys.argv[1], sys.argv[2], sys.argv[3])
