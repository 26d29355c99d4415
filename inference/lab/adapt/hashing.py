"""Normalised keys of a function: what makes two functions 'the same' to de-duplicate and exclude.

Bodies are compared after `ast.unparse` (formatting, comments and quote style gone) and
docstrings after `inspect.cleandoc`, lower-casing and collapsing whitespace, so a copy that was
re-indented, re-wrapped or re-commented still matches.
"""

from __future__ import annotations

import ast
import hashlib
import inspect
from dataclasses import dataclass


@dataclass(frozen=True)
class Keys:
    """The three normalised hashes of one function."""

    name_docstring: str
    docstring: str
    body: str | None  # None when the function has nothing after its docstring


def function_keys(node: ast.FunctionDef | ast.AsyncFunctionDef) -> Keys | None:
    """The keys of a function with a docstring, or None when it has no docstring."""
    docstring = ast.get_docstring(node, clean=False)
    if docstring is None:
        return None
    body = node.body[1:]
    return Keys(
        name_docstring=digest(f"{node.name.lower()}\0{normal_docstring(docstring)}"),
        docstring=digest(normal_docstring(docstring)),
        body=body_key(body) if body else None,
    )


def normal_docstring(docstring: str) -> str:
    """The docstring's words, lower-cased and single-spaced."""
    return " ".join(inspect.cleandoc(docstring).lower().split())


def body_key(statements: list[ast.stmt]) -> str:
    """Hash of the statements as `ast.unparse` writes them."""
    return digest(ast.unparse(ast.Module(body=statements, type_ignores=[])))


def digest(text: str) -> str:
    """A short, stable hex digest."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:24]
