"""A suite from any Python module whose functions carry doctests: one problem per function.

The prompt is what a person has written when only the body is missing: the module's imports,
the module's functions that this one calls (in full, as code above it), then the function's
header and docstring. The test runs the docstring's examples against the answer with
`doctest`, so a problem is only as demanding as its examples (they are visible in the prompt,
as in HumanEval). The reference body is the module's own; `validated` keeps the problems
whose reference passes its test here.

The `more-itertools` suite is built this way from the installed `more_itertools/recipes.py`
(the itertools documentation's recipes; MIT licence), pinned in the bench extras.
"""

from __future__ import annotations

import ast
import doctest
import importlib.util
import inspect
from pathlib import Path

from inference.lab.problems.errors import SuiteError
from inference.lab.problems.problem import Problem
from inference.lab.problems.sandbox import Limits, run_test

_TEST = """
{helpers}import doctest as _doctest

_EXAMPLES = {examples!r}


def check(candidate):
    names = dict(globals())
    names[{name!r}] = candidate
    test = _doctest.DocTestParser().get_doctest(_EXAMPLES, names, {name!r}, None, 0)
    flags = _doctest.ELLIPSIS | _doctest.NORMALIZE_WHITESPACE
    runner = _doctest.DocTestRunner(optionflags=flags)
    failed, attempted = runner.run(test, out=lambda text: None)
    assert attempted, "no examples ran"
    assert not failed, f"{{failed}} of {{attempted}} examples failed"
"""


def more_itertools_path() -> Path:
    """The recipes module of the installed more-itertools package."""
    spec = importlib.util.find_spec("more_itertools")
    if spec is None or not spec.submodule_search_locations:
        raise SuiteError(
            "the more-itertools suite needs the more-itertools package: pip install '.[bench]'"
        )
    return Path(next(iter(spec.submodule_search_locations))) / "recipes.py"


def doctest_problems(path: Path, prefix: str) -> list[Problem]:
    """One problem per top-level function of `path` with doctest examples (private ones too)."""
    try:
        source = path.read_text(encoding="utf-8")
        tree = ast.parse(source)
    except (OSError, UnicodeDecodeError, SyntaxError) as exc:
        raise SuiteError(f"{path}: cannot read the module: {exc}") from exc
    lines = source.splitlines(keepends=True)
    imports = "".join(
        _segment(lines, node) + "\n"
        for node in tree.body
        if isinstance(node, ast.Import | ast.ImportFrom)
    )
    module = _Module(lines, [n for n in tree.body if _binds(n)])
    problems = []
    for node in tree.body:
        if not isinstance(node, ast.FunctionDef):
            continue
        docstring = ast.get_docstring(node, clean=False)
        if not docstring or ">>>" not in docstring or len(node.body) < 2:
            continue
        examples = inspect.cleandoc(docstring)
        above = module.needed(_names(node), node)
        more = [n for n in module.needed(_example_names(examples), node) if n not in above]
        header_and_doc = "".join(lines[_start(node) - 1 : node.body[0].end_lineno])
        body = "".join(lines[node.body[1].lineno - 1 : node.end_lineno])
        prompt = f"{imports}\n\n{module.code(above)}{header_and_doc}"
        test = _TEST.format(helpers=module.code(more), examples=examples, name=node.name)
        problems.append(Problem(f"{prefix}{node.name}", prompt, node.name, test, body))
    if not problems:
        raise SuiteError(f"{path}: no function with doctest examples")
    return problems


def validated(problems: list[Problem], limits: Limits) -> list[Problem]:
    """The problems whose reference body passes their test here (this Python, this sandbox)."""
    return [p for p in problems if run_test(p, p.solution, limits).passed]


class _Module:
    """The module's top-level statements that bind names, and which of them code needs."""

    def __init__(self, lines: list[str], nodes: list[ast.stmt]):
        self.lines = lines
        self.nodes = nodes
        self.binders: dict[str, list[ast.stmt]] = {}
        for node in nodes:
            for name in _bound(node):
                self.binders.setdefault(name, []).append(node)

    def needed(self, names: set[str], own: ast.stmt) -> list[ast.stmt]:
        """The statements binding `names`, and those they need in turn, in module order."""
        seen: set[int] = set()
        pending = sorted(names)
        while pending:
            for node in self.binders.get(pending.pop(), []):
                if node is not own and id(node) not in seen:
                    seen.add(id(node))
                    pending.extend(_names(node))
        return [node for node in self.nodes if id(node) in seen]

    def code(self, nodes: list[ast.stmt]) -> str:
        return "".join(_segment(self.lines, node) + "\n\n\n" for node in nodes)


def _binds(node: ast.stmt) -> bool:
    """A statement to carry along when code needs a name it binds (not imports, not __all__)."""
    if isinstance(node, ast.Import | ast.ImportFrom | ast.Expr):
        return False
    return bool(_bound(node)) and "__all__" not in _bound(node)


def _bound(node: ast.stmt) -> set[str]:
    """Names a top-level statement binds: its function or class, its assignments' targets."""
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return {node.name}
    names = set()
    for child in ast.walk(node):
        if isinstance(child, ast.Name) and isinstance(child.ctx, ast.Store):
            names.add(child.id)
        elif isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(child.name)
    return names


def _names(node: ast.AST) -> set[str]:
    return {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}


def _example_names(examples: str) -> set[str]:
    """Names the docstring's examples use."""
    names: set[str] = set()
    for example in doctest.DocTestParser().get_examples(examples):
        try:
            names |= _names(ast.parse(example.source))
        except SyntaxError:
            continue
    return names


def _start(node: ast.stmt) -> int:
    """The first line of a statement, a function's decorators included."""
    decorators = getattr(node, "decorator_list", [])
    return min([node.lineno, *(d.lineno for d in decorators)])


def _segment(lines: list[str], node: ast.stmt) -> str:
    return "".join(lines[_start(node) - 1 : node.end_lineno]).rstrip("\n")
