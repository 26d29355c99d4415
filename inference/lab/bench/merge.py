"""`prewrite bench merge OUT A B ...`: pool the runs of one suite's shards into one result
(bench runs, or pass1 runs)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from inference.lab.bench.errors import ResultsError
from inference.lab.bench.quality import PASS1_RESUME_KEYS, Pass1Run, pass1_document, resume_pass1
from inference.lab.bench.results import RESUME_KEYS, build_results, read_results, run_from_results
from inference.lab.bench.runner import BenchRun


def merge(folders: list[Path]) -> dict[str, Any]:
    """The results of all `folders` as one run: same settings, disjoint problems required."""
    if len(folders) < 2:
        raise ResultsError("bench merge needs at least two result folders")
    stored = [read_results(folder) for folder in folders]
    first = stored[0]
    for folder, other in zip(folders[1:], stored[1:], strict=True):
        differ = [k for k in RESUME_KEYS if k != "shard" and other.get(k) != first.get(k)]
        if differ:
            changes = ", ".join(f"{k} {first.get(k)!r} vs {other.get(k)!r}" for k in differ)
            raise ResultsError(f"{folders[0]} and {folder} were run with other settings: {changes}")
    seen: dict[str, Path] = {}
    merged = BenchRun()
    for folder, results in zip(folders, stored, strict=True):
        run = run_from_results(results, folder)
        for task in _verdicts(results):
            if task in seen:
                raise ResultsError(f"{task} is in both {seen[task]} and {folder}")
            seen[task] = folder
        merged.examples += run.examples
        merged.excluded.update(results.get("excluded_tasks") or {})
        merged.errors.update(run.errors)
        merged.interrupted |= bool(results.get("interrupted"))
    merged.examples.sort(key=lambda e: _natural(e.task_id))
    merged.excluded = dict(sorted(merged.excluded.items(), key=lambda item: _natural(item[0])))
    meta = {k: first.get(k) for k in (*RESUME_KEYS, "torch")} | {"shard": None}
    meta["problems"] = sum(int(r.get("problems") or 0) for r in stored)
    meta["merged_from"] = [
        {"folder": str(f), "shard": r.get("shard"), "n": r["n"], "threads": r.get("threads"),
         "created": r.get("created")}
        for f, r in zip(folders, stored, strict=True)
    ]  # fmt: skip
    return build_results(merged, meta)


def merge_pass1(stored: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    """The pass1.json documents of one suite's shards (where, document) as one: the same
    settings and disjoint problems required; ResultsError otherwise."""
    if len(stored) < 2:
        raise ResultsError("bench merge needs at least two result folders")
    first_where, first = stored[0]
    keys = [k for k in PASS1_RESUME_KEYS if k != "shard"]
    merged, seen = Pass1Run(), dict[str, str]()
    for where, document in stored:
        differ = [k for k in keys if document.get(k) != first.get(k)]
        if differ:
            changes = ", ".join(f"{k} {first.get(k)!r} vs {document.get(k)!r}" for k in differ)
            raise ResultsError(f"{first_where} and {where} were run with other settings: {changes}")
        run = resume_pass1(document, document, where)
        for task in [a.task_id for a in run.answers] + list(run.refused):
            if task in seen:
                raise ResultsError(f"{task} is in both {seen[task]} and {where}")
            seen[task] = where
        merged.answers += run.answers
        merged.refused.update(run.refused)
        merged.interrupted |= not document.get("complete", False)
    merged.answers.sort(key=lambda a: _natural(a.task_id))
    stored_only = ("complete", "summary", "answers", "refused")
    meta = {k: v for k, v in first.items() if k not in stored_only}
    meta |= {"shard": None, "problems": len(seen), "merged_from": [w for w, _ in stored]}
    return pass1_document(meta, merged, complete=not merged.interrupted)



def _verdicts(results: dict[str, Any]) -> list[str]:
    """Every task id the run has a verdict for: measured, excluded or refused."""
    measured = [e["task_id"] for e in results["examples"]]
    return measured + list(results.get("excluded_tasks") or []) + list(results.get("errors") or {})


def _natural(task_id: str) -> list[Any]:
    """HumanEval/9 before HumanEval/10."""
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", task_id)]
