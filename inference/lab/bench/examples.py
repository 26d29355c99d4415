"""The prompt's own `>>>` examples run on an answer, in the server's sandbox, and what they tell.

The server shows "examples 3/3" beside a suggestion (inference/examples); the benchmarks run
the same examples on their answers and split pass@1 of the hidden tests by the result, which
says how much that badge is worth.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Iterable

from inference.examples.sandbox import Sandbox, count_examples


@functools.cache
def examples_sandbox() -> Sandbox | None:
    """The server's examples sandbox, probed once (None where it does not work here)."""
    sandbox, _ = Sandbox.probe()
    return sandbox


def run_examples(sandbox: Sandbox, prompt: str, answer: str) -> tuple[int, int]:
    """(passed, total) of the prompt's last docstring's examples, with `answer` as the body."""
    docstring = _last_docstring(prompt)
    if not docstring or not count_examples(docstring):
        return 0, 0
    run = sandbox.run(prompt + answer, docstring, "candidate")
    return run.passed, run.total


def _last_docstring(prompt: str) -> str | None:
    """The docstring of the prompt's last function, read as doctest reads `__doc__`."""
    try:
        tree = ast.parse(prompt + "    pass\n")
    except SyntaxError:
        return None
    functions = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
    if not functions:
        return None
    last = max(functions, key=lambda n: n.lineno)
    return ast.get_docstring(last, clean=False)


def examples_figures(rows: Iterable[tuple[int, int, bool]]) -> dict[str, float]:
    """From (examples passed, examples total, hidden tests passed) per answer: how often the
    examples pass, and pass@1 where they pass and where they fail."""
    checked = [row for row in rows if row[1] > 0]
    passed = [hidden for done, total, hidden in checked if done == total]
    failed = [hidden for done, total, hidden in checked if done < total]
    return {
        "examples_checked": float(len(checked)),
        "examples_pass_rate": len(passed) / len(checked) if checked else 0.0,
        "pass_at_1_examples_passed": sum(passed) / len(passed) if passed else 0.0,
        "pass_at_1_examples_failed": sum(failed) / len(failed) if failed else 0.0,
        "examples_passed_n": float(len(passed)),
        "examples_failed_n": float(len(failed)),
    }


def examples_line(summary: dict[str, float]) -> str:
    """The examples' figures of a summary, in words."""
    if not summary.get("examples_checked"):
        return "the prompts' examples were not run (none, or no sandbox here)"
    return (
        f"the prompt's examples pass on {100 * summary['examples_pass_rate']:.1f}% of "
        f"{summary['examples_checked']:.0f} answers with examples; hidden-test pass@1 where "
        f"they pass {100 * summary['pass_at_1_examples_passed']:.1f}% "
        f"(n={summary['examples_passed_n']:.0f}), where they fail "
        f"{100 * summary['pass_at_1_examples_failed']:.1f}% (n={summary['examples_failed_n']:.0f})"
    )
