"""Sessions from a real library: more-itertools' own functions, each retyped in its own file.

A session keeps the module's imports, the function before it and the function after it (the
neighbours a person working in the file would see), the function's header, and the first
paragraph of its docstring as the spec to type; the body is the model's to write. Only public
functions whose first paragraph has 2 to 4 sentences and no example, and whose body is of
modest size, are taken, in the order of the installed files: the pinned version
(pyproject's `bench` extra) gives the same sessions everywhere.
"""

from __future__ import annotations

import ast
import importlib.util
import re
from pathlib import Path

from lsp_server.errors import ServerError

FILES = ("more.py", "recipes.py")
SENTENCES = (2, 4)
BODY_CHARS = (60, 700)  # about 20 to 200 tokens
_SENTENCE_END = re.compile(r"[.!?](\s|$)")


def more_itertools_parts() -> list[tuple[str, str, str, str]]:
    """(name, above, docstring, below) for each more-itertools function that makes a session."""
    folder = package_folder()
    parts = []
    for file in FILES:
        source = (folder / file).read_text(encoding="utf-8")
        parts += [
            (f"more-itertools/{name}", above, docstring, below)
            for name, above, docstring, below in _file_parts(source)
        ]
    return parts


def package_folder() -> Path:
    spec = importlib.util.find_spec("more_itertools")
    if spec is None or spec.origin is None:
        raise ServerError(
            "bench-lsp's default sessions need the more-itertools package: pip install '.[bench]'"
        )
    return Path(spec.origin).parent


def module_outline(source: str) -> tuple[list[str], str, list[ast.FunctionDef]]:
    """A module's lines (ends kept), its import statements' text, its top-level functions."""
    tree = ast.parse(source)
    lines = source.splitlines(keepends=True)
    imports = "".join(
        "".join(lines[node.lineno - 1 : node.end_lineno])
        for node in tree.body
        if isinstance(node, (ast.Import, ast.ImportFrom))
    )
    return lines, imports, [node for node in tree.body if isinstance(node, ast.FunctionDef)]


def neighbours(functions: list[ast.FunctionDef], i: int, lines: list[str]) -> tuple[str, str]:
    """The source of the functions before and after function i ('' where there is none)."""
    before = function_source(functions[i - 1], lines) if i else ""
    after = function_source(functions[i + 1], lines) if i + 1 < len(functions) else ""
    return before, after


def _file_parts(source: str) -> list[tuple[str, str, str, str]]:
    lines, imports, functions = module_outline(source)
    parts = []
    for i, function in enumerate(functions):
        spec = _spec(function, lines)
        if spec is None:
            continue
        docstring, header_end = spec
        start = first_line(function)
        before, after = neighbours(functions, i, lines)
        header = "".join(lines[start:header_end])
        above = f"{imports}\n\n{before}\n\n\n{header}    "
        below = f"\n\n\n{after}\n" if after else "\n"
        parts.append((function.name, above, docstring, below))
    return parts


def _spec(function: ast.FunctionDef, lines: list[str]) -> tuple[str, int] | None:
    """The docstring's first paragraph and the line after the header, when it makes a session."""
    if function.name.startswith("_") or len(function.body) < 2:
        return None
    first = function.body[0]
    if not (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)):
        return None
    if not isinstance(first.value.value, str):
        return None
    paragraph = first.value.value.strip().split("\n\n", 1)[0]
    sentences = len(_SENTENCE_END.findall(paragraph))
    body = "".join(lines[function.body[1].lineno - 1 : function.end_lineno])
    if ">>>" in paragraph or not SENTENCES[0] <= sentences <= SENTENCES[1]:
        return None
    if not BODY_CHARS[0] <= len(body) <= BODY_CHARS[1]:
        return None
    lines_of_paragraph = [line.strip() for line in paragraph.splitlines()]
    return "\n    ".join(lines_of_paragraph), first.lineno - 1


def first_line(function: ast.FunctionDef) -> int:
    """The index of the function's first line, decorators included."""
    return min([function.lineno, *(d.lineno for d in function.decorator_list)]) - 1


def function_source(function: ast.FunctionDef, lines: list[str]) -> str:
    return "".join(lines[first_line(function) : function.end_lineno]).rstrip("\n")
