"""`prewrite bench compare A B`: what changed between two result folders, e.g. before/after."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from inference.lab.bench.results import read_results

SETTINGS = ("suite", "model", "adapter", "system_prompt", "acceptance", "dtype", "device",
            "max_tokens", "prompt_format", "lookahead")  # fmt: skip
VERDICTS = ("base_pass", "stream_pass", "identical")
_LISTED = 10  # task ids named per changed verdict


def compare(before: Path, after: Path) -> str:
    """A report of setting changes, summary deltas (after - before) and changed verdicts."""
    a, b = read_results(before), read_results(after)
    lines = [f"A: {before}", f"B: {after}"]
    lines += [
        f"setting {key}: {a.get(key)} -> {b.get(key)}"
        for key in SETTINGS
        if a.get(key) != b.get(key)
    ]
    lines += ["", *_summary_rows(a, b), "", *_task_rows(a, b)]
    return "\n".join(lines)


def _summary_rows(a: dict[str, Any], b: dict[str, Any]) -> list[str]:
    keys = ["n", "excluded"] + [k for k in a["summary"] if k in b["summary"]]
    width = max(len(k) for k in keys)
    rows = [f"{'':{width}}  {'A':>10}  {'B':>10}  {'B - A':>10}"]
    for key in keys:
        old = a[key] if key in ("n", "excluded") else a["summary"][key]
        new = b[key] if key in ("n", "excluded") else b["summary"][key]
        rows.append(f"{key:{width}}  {old:10.4g}  {new:10.4g}  {new - old:+10.4g}")
    return rows


def _task_rows(a: dict[str, Any], b: dict[str, Any]) -> list[str]:
    old = {e["task_id"]: e for e in a["examples"]}
    new = {e["task_id"]: e for e in b["examples"]}
    common = [task for task in old if task in new]
    rows = [
        f"tasks in both: {len(common)}; only in A: {len(old.keys() - new.keys())}; "
        f"only in B: {len(new.keys() - old.keys())}"
    ]
    for verdict in VERDICTS:
        gained = [t for t in common if new[t][verdict] and not old[t][verdict]]
        lost = [t for t in common if old[t][verdict] and not new[t][verdict]]
        if gained or lost:
            rows.append(f"{verdict}: +{len(gained)} {_names(gained)} -{len(lost)} {_names(lost)}")
    return rows


def _names(tasks: list[str]) -> str:
    more = f", ... {len(tasks) - _LISTED} more" if len(tasks) > _LISTED else ""
    return f"[{', '.join(tasks[:_LISTED])}{more}]"
