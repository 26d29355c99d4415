"""`prewrite bench merge OUT A B ...`: pool the runs of one suite's shards into one result."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from inference.lab.bench.errors import ResultsError
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


def _verdicts(results: dict[str, Any]) -> list[str]:
    """Every task id the run has a verdict for: measured, excluded or refused."""
    measured = [e["task_id"] for e in results["examples"]]
    return measured + list(results.get("excluded_tasks") or []) + list(results.get("errors") or {})


def _natural(task_id: str) -> list[Any]:
    """HumanEval/9 before HumanEval/10."""
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", task_id)]
