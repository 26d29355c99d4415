"""The second suite (doctests of a module) and the verdicts on failed answers."""

from __future__ import annotations

from pathlib import Path

import pytest

from inference.lab.bench.failures import as_written, judge_failure
from inference.lab.problems.doctest_suite import doctest_problems, validated
from inference.lab.problems.errors import SuiteError
from inference.lab.problems.problem import Problem
from inference.lab.problems.sandbox import Limits, run_test
from inference.lab.problems.suites import load_suite

MODULE = '''"""A module of doctested helpers."""

from functools import reduce
import operator

pytestmark = pytest.mark.timeout(60)

_SCALE = 10


def scale(x):
    """Times the scale.

    >>> scale(2)
    20
    """
    return x * _SCALE


def total(values):
    """The scaled sum.

    >>> total([1, 2])
    30
    """
    return reduce(operator.add, map(scale, values))


def wrong(values):
    """Its reference is wrong: the suite drops it.

    >>> wrong([1])
    1
    """
    return 2


def shown(values):
    """Uses a helper only in its examples.

    >>> shown(scale(1))
    11
    """
    return values + 1


def undocumented(x):
    return x
'''

PROMPT = 'def add(a, b):\n    """Sum of a and b.\n\n    >>> add(1, 2)\n    3\n    """\n'
ADD = Problem("t/add", PROMPT, "add", "def check(candidate):\n    assert candidate(1, 2) == 3\n")


def _problems(tmp_path: Path) -> dict[str, Problem]:
    path = tmp_path / "helpers.py"
    path.write_text(MODULE, encoding="utf-8")
    return {p.entry_point: p for p in doctest_problems(path, "helpers/")}


def test_each_doctested_function_is_a_problem_with_what_it_needs_above(tmp_path: Path) -> None:
    problems = _problems(tmp_path)
    assert sorted(problems) == ["scale", "shown", "total", "wrong"]
    total = problems["total"]
    assert total.task_id == "helpers/total"
    assert total.prompt.startswith("from functools import reduce\nimport operator\n")
    # what total calls, and what that needs in turn, comes above it; nothing else does
    assert "_SCALE = 10" in total.prompt and "def scale(x):" in total.prompt
    assert "def wrong" not in total.prompt and "def shown" not in total.prompt
    assert total.prompt.endswith('    30\n    """\n')
    assert total.solution == "    return reduce(operator.add, map(scale, values))\n"
    # a helper used only by the examples is the test's, not the prompt's
    assert "def scale" not in problems["shown"].prompt
    assert "def scale" in problems["shown"].test


def test_the_reference_passes_and_a_wrong_body_fails(tmp_path: Path) -> None:
    problems = _problems(tmp_path)
    total = problems["total"]
    assert run_test(total, total.solution, Limits()).passed
    outcome = run_test(total, "    return 0\n", Limits())
    assert not outcome.passed and "1 of 1 examples failed" in outcome.detail
    assert [p.entry_point for p in validated(list(problems.values()), Limits())] == [
        "scale", "total", "shown",
    ]  # fmt: skip


def test_a_module_without_doctests_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "plain.py"
    path.write_text("def f(x):\n    return x\n", encoding="utf-8")
    with pytest.raises(SuiteError, match="no function with doctest examples"):
        doctest_problems(path, "plain/")
    with pytest.raises(SuiteError, match="cannot read the module"):
        doctest_problems(tmp_path / "missing.py", "m/")


def test_the_more_itertools_suite_comes_from_the_installed_package() -> None:
    problems = load_suite("more-itertools")
    assert len(problems) >= 40
    assert all(p.task_id.startswith("more-itertools/") for p in problems)
    take = next(p for p in problems if p.entry_point == "take")
    assert run_test(take, take.solution, Limits()).passed


def test_as_written_keeps_definitions_and_drops_example_calls() -> None:
    chat = "import math\n\ndef add(a, b):\n    return math.fsum([a, b])\n\nprint(add(1, 2))\n"
    program = as_written(PROMPT, chat)
    assert program is not None
    assert "import math" in program and "print(" not in program
    assert program.count("def add") == 2  # the model's restated add follows the prompt's
    body = "    return helper(a, b)\n\ndef helper(a, b):\n    return a + b\n\nadd(1, 2)\nprin"
    program = as_written(PROMPT, body)
    assert program is not None and "def helper" in program and "prin" not in program
    assert as_written(PROMPT, "    return (\n") is None


def _answer(finish: str, raw: str = "", detail: str = "AssertionError") -> dict:
    return {"finish_reason": finish, "raw": raw, "passed": False, "detail": detail}


def never(text: str) -> str:
    raise AssertionError("no continuation expected")


def test_verdicts_on_failed_answers() -> None:
    limits = Limits()
    verdict = judge_failure(ADD, PROMPT, _answer("length"), False, "", never, limits)
    assert verdict.verdict == "cut_by_budget"
    # chat: the whole code block passes though the extracted body did not -> cut by us
    chat = "import operator\n\ndef add(a, b):\n    return operator.add(a, b)\n"
    assert judge_failure(ADD, PROMPT, _answer("stop", chat), True, "", never, limits).verdict == (
        "cut_by_us"
    )
    wrong_chat = "def add(a, b):\n    return a - b\n"
    verdict = judge_failure(ADD, PROMPT, _answer("stop", wrong_chat), True, "", never, limits)
    assert verdict.verdict == "wrong"
    # raw: the stop rule ended the answer at a helper's `def`: continued, it passes
    uncut = "    return helper(a, b)\n\n\ndef"
    asked = []

    def carry_on(text: str) -> str:
        asked.append(text)
        return " helper(a, b):\n    return a + b\n"

    missing = _answer("stop", detail="NameError: name 'helper' is not defined")
    verdict = judge_failure(ADD, PROMPT, missing, False, uncut, carry_on, limits)
    assert verdict.verdict == "cut_by_us" and asked == [PROMPT + uncut]
    # failed on its own code, not on a name it lacks: nothing was cut that the body needs
    uncut = "    return a - b\n\n#"
    assert judge_failure(ADD, PROMPT, _answer("stop"), False, uncut, never, limits).verdict == (
        "wrong"
    )
    assert judge_failure(ADD, PROMPT, _answer("eos"), False, "", never, limits).verdict == "wrong"
