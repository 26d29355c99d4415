"""A problem: a prompt to complete and the test that judges the answer."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Problem:
    """One benchmark problem: the prompt to complete and the test that judges the answer."""

    task_id: str
    prompt: str
    entry_point: str  # the function the test's `check` is called with
    test: str  # defines `check(candidate)`
    solution: str = ""  # the reference body (`canonical_solution`), where the suite has one
