"""Keeping training data disjoint from evaluation suites: HumanEval and any JSONL passed to exclude.

Every function in a suite's prompts (the entry point and helpers, with the canonical solution
when the file has one) contributes its normalised keys (`hashing.py`). A harvested function
that shares any key with a suite is removed and counted by suite and reason.
"""

from __future__ import annotations

import ast
import gzip
import hashlib
import json
import warnings
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from inference.lab.adapt.hashing import Keys, function_keys
from inference.lab.problems.suites import HUMANEVAL, humaneval_path, load_suite

REASONS = ("name+docstring", "docstring", "body")


@dataclass
class Exclusion:
    """The keys of one suite's functions, and what matching them removed."""

    suite: str
    sha256: str
    problems: int
    keys: dict[str, set[str]] = field(default_factory=lambda: {r: set() for r in REASONS})
    removed: Counter[str] = field(default_factory=Counter)

    def match(self, keys: Keys) -> str | None:
        """The first reason `keys` matches this suite, or None."""
        values = {"name+docstring": keys.name_docstring, "docstring": keys.docstring,
                  "body": keys.body}  # fmt: skip
        return next((r for r in REASONS if values[r] in self.keys[r]), None)

    def summary(self) -> dict:
        """What goes into the data manifest."""
        return {
            "suite": self.suite,
            "sha256": self.sha256,
            "problems": self.problems,
            "keys": {reason: len(keys) for reason, keys in self.keys.items()},
            "removed": dict(self.removed),
        }


def load_exclusions(suites: list[str]) -> list[Exclusion]:
    """Exclusions for HumanEval (always first) and every further suite named."""
    return [load_exclusion(suite) for suite in dict.fromkeys([HUMANEVAL, *suites])]


def load_exclusion(suite: str) -> Exclusion:
    """The keys of every function in one suite's prompts and solutions."""
    problems = load_suite(suite)  # SuiteError when missing or malformed
    path = humaneval_path() if suite == HUMANEVAL else Path(suite).expanduser()
    solutions = _canonical_solutions(path)
    exclusion = Exclusion(suite, _file_sha256(path), len(problems))
    for problem in problems:
        code = problem.prompt + solutions.get(problem.task_id, "")
        tree = _parse(code) or _parse(problem.prompt)
        if tree is None:
            continue
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                keys = function_keys(node)
                if keys is not None:
                    _add(exclusion, keys)
    return exclusion


def first_match(exclusions: list[Exclusion], keys: Keys) -> tuple[Exclusion, str] | None:
    """The first suite and reason that `keys` matches, or None when disjoint from all."""
    for exclusion in exclusions:
        reason = exclusion.match(keys)
        if reason is not None:
            return exclusion, reason
    return None


def _add(exclusion: Exclusion, keys: Keys) -> None:
    exclusion.keys["name+docstring"].add(keys.name_docstring)
    exclusion.keys["docstring"].add(keys.docstring)
    if keys.body is not None:
        exclusion.keys["body"].add(keys.body)


def _canonical_solutions(path: Path) -> dict[str, str]:
    """task_id -> canonical_solution, for suites whose rows carry one (HumanEval does)."""
    opener = gzip.open if path.suffix == ".gz" else open
    solutions = {}
    with opener(path, "rt", encoding="utf-8") as lines:
        for line in lines:
            row = json.loads(line) if line.strip() else {}
            if isinstance(row.get("canonical_solution"), str):
                solutions[row["task_id"]] = row["canonical_solution"]
    return solutions


def _parse(code: str) -> ast.Module | None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ast.parse(code)
    except (SyntaxError, ValueError):
        return None


def _file_sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()
