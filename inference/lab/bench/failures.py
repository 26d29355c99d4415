"""Where a failed answer went wrong: the model's code, or what we cut from it.

Each failed answer of `prewrite bench pass1` gets one verdict:
- `cut_by_budget`: it ran into maxTokens;
- `cut_by_us`: the code the model wrote passes when it is run as the model wrote it, so the stop
  rule or the body extraction took the points: a chat answer's whole code block (its imports,
  helpers and the restated function), or a raw/FIM answer that failed on a name it does not
  define (NameError), decoded on past the line the stop rule ended it at (a helper the model
  writes after the body, say);
- `wrong`: the model's own code fails too.
"As the model wrote it" keeps the module's definitions and imports only (evalplus's sanitising):
example calls and prints after them are dropped, they are no part of the answer.
"""

from __future__ import annotations

import ast
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from inference.lab.problems.problem import Problem
from inference.lab.problems.sandbox import Limits, run_test

Verdict = Literal["passed", "cut_by_budget", "cut_by_us", "wrong"]
VERDICTS: tuple[Verdict, ...] = ("passed", "cut_by_budget", "cut_by_us", "wrong")
_KEPT = (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)

Continue = Callable[[str], str]  # text the model continues -> what it writes, no body rule


@dataclass(frozen=True)
class Failure:
    """One answer's verdict and the program that decided it (empty when none was run)."""

    task_id: str
    verdict: Verdict
    program: str = ""
    detail: str = ""


def judge_failure(
    problem: Problem,
    prompt: str,
    answer: dict,
    chat: bool,
    uncut: str,
    carry_on: Continue,
    limits: Limits,
) -> Failure:
    """The verdict on one failed answer (a pass1.json answer: finish_reason, raw, ...).

    `uncut` is the answer's tokens decoded whole: past the stop rule's cut, up to the token that
    ended it. `carry_on` decodes on from a text without the body rule (raw and FIM only).
    """
    task = problem.task_id
    if answer["finish_reason"] == "length":
        return Failure(task, "cut_by_budget")
    if chat:
        written = answer["raw"]
    elif answer["finish_reason"] == "stop" and answer.get("detail", "").startswith("NameError"):
        written = uncut + carry_on(prompt + uncut)
    else:
        return Failure(task, "wrong")
    program = as_written(prompt, written)
    if program is None:
        return Failure(task, "wrong", detail="the model's code does not parse")
    outcome = run_test(problem, program, limits, prompt="")
    return Failure(task, "cut_by_us" if outcome.passed else "wrong", program, outcome.detail)


def as_written(prompt: str, written: str) -> str | None:
    """The prompt and the model's code as one module of definitions, or None if it won't parse.

    The code either continues the prompt's function (a body, then perhaps helpers) or restates
    it (chat): then the prompt's function gets a placeholder body and the model's version
    replaces it. A last line cut short is dropped.
    """
    for glue in ("", "    pass\n\n"):
        lines = (prompt + glue + written).splitlines(keepends=True)
        base = len((prompt + glue).splitlines())  # at least one written line stays
        for end in range(len(lines), max(len(lines) - 8, base), -1):
            source = "".join(lines[:end])
            try:
                tree = ast.parse(source)
            except SyntaxError:
                continue
            kept = [node for node in tree.body if isinstance(node, _KEPT)]
            return "".join(_segment(source, node) + "\n\n" for node in kept)
    return None


def summarize_failures(answers: Sequence[dict], failures: Sequence[Failure]) -> dict[str, int]:
    """How many answers got each verdict (passed ones included)."""
    counts = Counter(f.verdict for f in failures)
    counts["passed"] = sum(bool(a["passed"]) for a in answers)
    return {verdict: counts.get(verdict, 0) for verdict in VERDICTS}


def _segment(source: str, node: ast.stmt) -> str:
    lines = source.splitlines(keepends=True)
    first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))])
    return "".join(lines[first - 1 : node.end_lineno]).rstrip("\n")
