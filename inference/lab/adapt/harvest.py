"""Harvesting functions with docstrings from Python sources with `ast`: stdlib, packages, folders.

A harvested function is cut into the prompt the engine would see (its header and docstring,
dedented) and the reference body (what follows the docstring). Files that cannot be read or
parsed are skipped and counted; nothing here runs the code it reads.
"""

from __future__ import annotations

import ast
import os
import re
import sysconfig
import tokenize
import warnings
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from inference.lab.adapt.hashing import Keys, function_keys

STDLIB, PACKAGES = "stdlib", "packages"
MAX_FILE_BYTES = 1 << 20
_TEST_DIRS = re.compile(r"^(tests?|testing|idle_test|unittests?|[\w-]*_tests?)$", re.IGNORECASE)
_TEST_FILES = re.compile(r"^(test_.*|.*_tests?|conftest)\.py$", re.IGNORECASE)
_ALWAYS_SKIPPED = {"__pycache__", "node_modules"}


@dataclass(frozen=True)
class Source:
    """A folder to harvest: its label in origins, its root and sub-folders not to enter."""

    label: str
    root: Path
    skip_dirs: frozenset[str] = frozenset()


@dataclass(frozen=True)
class Function:
    """A function with a docstring, as a prompt and a reference body."""

    origin: str  # label:relative/path.py:line
    name: str
    prompt: str  # header and docstring, dedented, ending with the closing quotes' line
    body: str  # the statements after the docstring, dedented
    docstring: str  # as written, without the quotes
    keys: Keys
    source: str = field(repr=False)  # the whole function, for the secret scan


def sources_from(names: list[str]) -> list[Source]:
    """'stdlib', 'packages' (this interpreter's site-packages) or folder paths."""
    paths = sysconfig.get_paths()
    found = []
    for name in names or [STDLIB]:
        if name == STDLIB:  # some layouts keep site-packages inside the stdlib folder
            skip = frozenset({"site-packages", "dist-packages"})
            found.append(Source(STDLIB, Path(paths["stdlib"]), skip))
        elif name == PACKAGES:
            found.append(Source(PACKAGES, Path(paths["purelib"])))
        else:
            found.append(Source(Path(name).name or name, Path(name).expanduser()))
    return found


def is_test_path(relative: Path) -> bool:
    """True for test files and anything inside a test folder."""
    return bool(
        _TEST_FILES.match(relative.name) or any(_TEST_DIRS.match(p) for p in relative.parts[:-1])
    )


def python_files(source: Source, counts: Counter[str]) -> Iterator[Path]:
    """The source's .py files in a stable order, test files left out (and counted)."""
    for folder, dirs, files in os.walk(source.root):
        dirs[:] = sorted(
            d for d in dirs
            if d not in _ALWAYS_SKIPPED and d not in source.skip_dirs and not d.startswith(".")
        )  # fmt: skip
        for name in sorted(files):
            if not name.endswith(".py"):
                continue
            path = Path(folder) / name
            if is_test_path(path.relative_to(source.root)):
                counts["files skipped: tests"] += 1
                continue
            yield path


def harvest(sources: list[Source], counts: Counter[str]) -> Iterator[Function]:
    """Every function with a docstring in the sources; skipped files and functions are counted."""
    for source in sources:
        for path in python_files(source, counts):
            tree, text = _parse(path, counts)
            if tree is None:
                continue
            counts["files"] += 1
            label = f"{source.label}:{path.relative_to(source.root).as_posix()}"
            yield from functions_in(tree, text, label, counts)


def _parse(path: Path, counts: Counter[str]) -> tuple[ast.Module | None, str]:
    """The file's syntax tree and text, or None (counted) when it cannot be read or parsed."""
    try:
        if path.stat().st_size > MAX_FILE_BYTES:
            counts["files skipped: larger than 1 MiB"] += 1
            return None, ""
        with tokenize.open(path) as handle:  # honours the file's encoding declaration
            text = handle.read()
    except (OSError, UnicodeDecodeError, SyntaxError):
        counts["files skipped: unreadable"] += 1
        return None, ""
    try:
        with warnings.catch_warnings():  # invalid escapes and the like: not our business
            warnings.simplefilter("ignore")
            return ast.parse(text, filename=str(path)), text
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        counts["files skipped: unparsable"] += 1
        return None, ""


def functions_in(
    tree: ast.Module, text: str, label: str, counts: Counter[str]
) -> Iterator[Function]:
    """The functions of one parsed file that have a docstring and a body after it."""
    lines = text.splitlines(keepends=True)
    for node in ast.walk(tree):
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        keys = function_keys(node)
        if keys is None:
            continue
        counts["functions with a docstring"] += 1
        function, problem = _cut(node, lines, keys, f"{label}:{node.lineno}")
        if function is None:
            counts[f"functions skipped: {problem}"] += 1
        else:
            yield function


def _cut(
    node: ast.FunctionDef | ast.AsyncFunctionDef, lines: list[str], keys: Keys, origin: str
) -> tuple[Function | None, str]:
    """Split a function's source into prompt and body, or say why it cannot be."""
    doc = node.body[0]
    assert doc.end_lineno is not None and doc.end_col_offset is not None
    if len(node.body) < 2:
        return None, "no body after the docstring"
    if doc.lineno == node.lineno or node.body[1].lineno <= doc.end_lineno:
        return None, "docstring shares a line with code"
    closing = lines[doc.end_lineno - 1]
    after = closing.encode("utf-8")[doc.end_col_offset :].decode(
        "utf-8", "replace"
    )  # offsets count bytes
    if not closing.rstrip("\r\n").endswith(('"""', "'''")) or after.strip():
        return None, "not a triple-quoted docstring on its own lines"
    end = node.end_lineno or doc.end_lineno
    indent = lines[node.lineno - 1][: node.col_offset]
    source = lines[node.lineno - 1 : end]
    if indent.strip() or any(line.strip() and not line.startswith(indent) for line in source):
        return None, "indentation it cannot be dedented by"
    source = [line[len(indent) :] if line.strip() else line.lstrip(" \t") for line in source]
    cut = doc.end_lineno - node.lineno + 1
    prompt, body = "".join(source[:cut]), "".join(source[cut:]).rstrip() + "\n"
    if "\t" in prompt or "\r" in prompt:
        return None, "tabs or carriage returns in the prompt"
    docstring = ast.get_docstring(node, clean=False) or ""
    return Function(origin, node.name, prompt, body, docstring, keys, "".join(source)), ""
