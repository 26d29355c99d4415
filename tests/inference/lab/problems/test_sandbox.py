"""The test sandbox: verdicts for passing, failing, hanging, crashing and greedy answers."""

from __future__ import annotations

import pytest

from inference.lab.problems.problem import Problem
from inference.lab.problems.sandbox import Limits, run_test

pytestmark = pytest.mark.timeout(60)

ADD = Problem(
    task_id="t/add",
    prompt='def add(a, b):\n    """Return a + b."""\n',
    entry_point="add",
    test="def check(candidate):\n    assert candidate(1, 2) == 3\n",
)
LIMITS = Limits(timeout_s=2.0, memory_mb=256)


@pytest.mark.parametrize(
    ("answer", "status", "detail"),
    [
        ("    return a + b\n", "passed", ""),
        ("    return a - b\n", "failed", "AssertionError"),
        ("    return a +\n", "failed", "SyntaxError"),
        ("    raise ValueError('no')\n", "failed", "ValueError: no"),
        ("    while True:\n        pass\n", "timeout", "time limit"),
        ("    return a + b\nimport ctypes\nctypes.string_at(0)\n", "crashed", "SIGSEGV"),
        ("    return a + b\nhog = []\nwhile True:\n    hog.append(' ' * 2**20)\n", "failed",
         "MemoryError"),
        ("    return a + b\nimport os\nos._exit(0)\n", "failed", "exited before the test"),
        ("    return a + b\nraise SystemExit(0)\n", "failed", "exited before the test"),
        ("    return a + b\nwhile True:\n    print('x' * 4096)\n", "failed", "File too large"),
    ],
    ids=["pass", "wrong", "syntax", "raises", "infinite loop", "segfault", "memory hog",
         "os._exit(0)", "SystemExit(0)", "output flood"],
)
def test_verdicts(answer: str, status: str, detail: str) -> None:
    outcome = run_test(ADD, answer, LIMITS)
    assert outcome.status == status
    assert detail in outcome.detail
    assert outcome.passed == (status == "passed")


def test_the_answer_runs_after_the_given_prompt() -> None:
    prompt = 'def add(a, b):\n    """Return a + b. Ints only.\n    """\n'
    assert run_test(ADD, "    return a + b\n", LIMITS, prompt=prompt).passed
    assert not run_test(ADD, "    return a + b\n", LIMITS, prompt="def other(a, b):\n").passed


def test_the_child_starts_in_an_empty_folder_without_our_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("PREWRITE_SECRET", "1")
    probe = (
        "    import os, sys\n"
        "    assert sorted(os.listdir('.')) == ['program.py', 'stderr', 'stdout']\n"
        "    assert 'PREWRITE_SECRET' not in os.environ\n"
        "    assert sys.flags.isolated\n"
        "    return a + b\n"
    )
    assert run_test(ADD, probe, LIMITS).passed
