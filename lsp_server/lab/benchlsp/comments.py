"""Sessions of the comment kind: a comment inside a function's body, and the block it asks for.

Taken from real code nobody wrote for this benchmark: the comments inside the bodies of
more-itertools' functions and of standard-library modules (installed wherever Python is). Each
session keeps the module's imports, the function before and the function after, and the
function itself with the block below one of its comments removed: the person retypes the
comment where it was and the model writes the block. The block is the code after the comment
at its indentation or deeper, up to a blank line or a line indented less (a block that runs
into the next comment at its indentation is not taken: the two comments would join). A comment
makes a session when the body has code above it, it has 3 words or more and is no marker
(TODO, noqa, type: ...), and its block is 1 to 12 lines of 40 to 700 characters (about 12 to
200 tokens). At most PER_FILE sessions come from one file, so every file contributes; the
order is fixed, so the sessions are the same everywhere.
"""

from __future__ import annotations

import ast
import re
import sysconfig
from pathlib import Path

from lsp_server.lab.benchlsp.library import FILES as MORE_ITERTOOLS_FILES
from lsp_server.lab.benchlsp.library import first_line, module_outline, neighbours, package_folder
from lsp_server.spec.text import indent_of

STDLIB_FILES = (
    "textwrap.py", "shutil.py", "difflib.py", "heapq.py", "statistics.py", "fractions.py",
    "argparse.py", "calendar.py", "tempfile.py", "zipfile/__init__.py", "configparser.py",
    "pprint.py", "inspect.py", "functools.py", "json/encoder.py", "urllib/parse.py",
    "email/utils.py", "tarfile.py", "gettext.py", "ipaddress.py",
)  # fmt: skip
PER_FILE = 3
BLOCK_LINES = (1, 12)
BLOCK_CHARS = (40, 700)
_NESTED_DEF = re.compile(r"^[ \t]*(?:async[ \t]+)?def[ \t]")
_MARKER = re.compile(r"\b(?:TODO|XXX|FIXME|noqa|type:|pragma|fmt:|pylint|mypy)\b|^[-=#*]")


def comment_parts() -> list[tuple[str, str, str, str]]:
    """(name, above, comment, below) for each comment that makes a session, in a fixed order."""
    sources: list[tuple[str, Path]] = [
        (f"more-itertools/{file}", package_folder() / file) for file in MORE_ITERTOOLS_FILES
    ]
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    sources += [(f"stdlib/{file}", stdlib / file) for file in STDLIB_FILES]
    parts = []
    for label, path in sources:
        if not path.exists():
            continue
        found = file_parts(path.read_text(encoding="utf-8"))
        parts += [
            (f"{label}:{name}", above, comment, below)
            for name, above, comment, below in found[:PER_FILE]
        ]
    return parts


def file_parts(source: str) -> list[tuple[str, str, str, str]]:
    """The comment sessions of one module: (function:line, above, comment, below)."""
    lines, imports, functions = module_outline(source)
    parts = []
    for i, function in enumerate(functions):
        block = _first_block(function, lines)
        if block is None:
            continue
        first, last, comment, end = block  # comment lines [first, last), the block [last, end)
        start = first_line(function)
        before, after = neighbours(functions, i, lines)
        indent = lines[first][: len(lines[first]) - len(lines[first].lstrip())]
        above = f"{imports}\n\n{before}\n\n\n" + "".join(lines[start:first]) + indent
        rest = "".join(lines[end : function.end_lineno]).rstrip("\n")
        below = "\n" + rest + (f"\n\n\n{after}\n" if after else "\n")
        parts.append((f"{function.name}:{first + 1}", above, comment, below))
    return parts


def _first_block(function: ast.FunctionDef, lines: list[str]) -> tuple[int, int, str, int] | None:
    """The first comment in the body that makes a session, as line indices and its text."""
    body = function.body
    docstring = isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
    code_from = (body[1].lineno if docstring and len(body) > 1 else body[0].lineno) - 1
    if docstring and len(body) == 1:
        return None
    def_indent = indent_of(lines[function.lineno - 1])
    index = code_from + 1  # code above the comment
    while index < (function.end_lineno or 0):
        line = lines[index]
        if not line.lstrip().startswith("#") or indent_of(line) <= def_indent:
            index += 1
            continue
        indent, first = indent_of(line), index
        while index < len(lines) and lines[index].lstrip().startswith("#"):
            if indent_of(lines[index]) != indent:
                break
            index += 1
        above = next((line for line in reversed(lines[:first]) if line.strip()), "")
        if _NESTED_DEF.match(above):  # the first line of a nested function: a new function's
            continue
        block = _block_after(lines, index, indent, function.end_lineno or 0)
        comment = "\n".join(line.strip().lstrip("#").strip() for line in lines[first:index])
        if block is not None and _usable(comment, lines[index:block]):
            return first, index, comment, block
    return None


def _block_after(lines: list[str], start: int, indent: int, stop: int) -> int | None:
    """The end (exclusive) of the block starting at `start`, at `indent` or deeper."""
    if start >= stop or not lines[start].strip() or indent_of(lines[start]) != indent:
        return None
    end = start
    while end < stop:
        line = lines[end]
        if not line.strip() or indent_of(line) < indent:
            break
        if end > start and indent_of(line) == indent and line.lstrip().startswith("#"):
            return None  # the next comment would join the typed one: no clear block
        end += 1
    return end


def _usable(comment: str, block: list[str]) -> bool:
    if len(comment.split()) < 3 or _MARKER.search(comment) or "#" in comment:
        return False
    chars = len("".join(block))
    lines_ok = BLOCK_LINES[0] <= len(block) <= BLOCK_LINES[1]
    return lines_ok and BLOCK_CHARS[0] <= chars <= BLOCK_CHARS[1]
