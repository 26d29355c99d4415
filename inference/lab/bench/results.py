"""results.json: its shape, the summary figures computed from the examples, reading and writing."""

from __future__ import annotations

import json
import os
import statistics
from collections.abc import Iterable, Mapping
from dataclasses import asdict, fields
from pathlib import Path
from typing import Any

from inference.config import EngineConfig
from inference.lab.bench.errors import ResultsError
from inference.lab.bench.examples import examples_figures
from inference.lab.bench.runner import BenchRun, ExampleResult

RESULTS_FILE = "results.json"

# The shape the issue fixes (extra keys are allowed everywhere).
TOP_FIELDS = {"suite": str, "model": str, "acceptance": str, "dtype": str, "n": int,
              "excluded": int, "summary": dict, "examples": list}  # fmt: skip
SUMMARY_FIELDS = dict.fromkeys(
    ("median_forward_speedup", "mean_forward_speedup", "median_wall_speedup",
     "mean_wall_speedup", "pass_at_1_base", "pass_at_1_stream", "identical_rate",
     "below_1x_rate", "median_residual_forwards", "median_base_forwards",
     "drafting_forwards_per_request"),
    float,
)  # fmt: skip
EXAMPLE_FIELDS = {"task_id": str, "units": int, "base_forwards": int,
                  "stream_residual_forwards": int, "base_wall_ms": float,
                  "stream_residual_wall_ms": float, "accepted_tokens": int,
                  "draft_tokens": int, "identical": bool, "base_pass": bool,
                  "stream_pass": bool}  # fmt: skip


def build_results(run: BenchRun, meta: dict[str, Any]) -> dict[str, Any]:
    """The results document: `meta` (suite, model, acceptance, dtype, ...) plus the figures."""
    return {
        **meta,
        "n": len(run.examples),
        "excluded": len(run.excluded),
        "interrupted": run.interrupted,
        "summary": summarize(run.examples),
        "examples": [example_record(e) for e in run.examples],
        "excluded_tasks": run.excluded,
        "errors": run.errors,
    }


def example_record(example: ExampleResult) -> dict[str, Any]:
    """One example as stored: its fields plus its three speedups."""
    return {
        **asdict(example),
        "forward_speedup": example.forward_speedup,
        "wall_speedup": example.wall_speedup,
        "cold_wall_speedup": example.cold_wall_speedup,
    }


def summarize(examples: list[ExampleResult]) -> dict[str, float]:
    """The summary figures; rates are fractions in [0, 1]. All 0.0 when there is no example."""
    forwards = [e.forward_speedup for e in examples]
    wall = [e.wall_speedup for e in examples]
    cold = [e.cold_wall_speedup for e in examples]
    residual = sum(e.stream_residual_forwards for e in examples)
    base = sum(e.base_forwards for e in examples)
    return {
        "median_forward_speedup": _median(forwards),
        "mean_forward_speedup": _mean(forwards),
        "median_wall_speedup": _median(wall),
        "mean_wall_speedup": _mean(wall),
        "pass_at_1_base": _rate(e.base_pass for e in examples),
        "pass_at_1_stream": _rate(e.stream_pass for e in examples),
        "identical_rate": _rate(e.identical for e in examples),
        "below_1x_rate": _rate(s < 1.0 for s in forwards),
        "median_residual_forwards": _median(e.stream_residual_forwards for e in examples),
        "median_base_forwards": _median(e.base_forwards for e in examples),
        "drafting_forwards_per_request": _mean(e.drafting_forwards for e in examples),
        # beyond the shape: the seed's other headline figures
        "median_cold_wall_speedup": _median(cold),
        "mean_cold_wall_speedup": _mean(cold),
        "wall_below_1x_rate": _rate(s < 1.0 for s in wall),
        "one_forward_rate": _rate(e.stream_residual_forwards == 1 for e in examples),
        "forwards_removed": 1.0 - residual / base if base else 0.0,
        "draft_kept_whole_rate": _rate(
            e.draft_tokens > 0 and e.accepted_tokens == e.draft_tokens for e in examples
        ),
        "draft_kept_none_rate": _rate(e.accepted_tokens == 0 for e in examples),
        "empty_answer_rate": _rate(not e.base_answer.strip() for e in examples),
        "median_base_wall_ms": _median(e.base_wall_ms for e in examples),
        "median_cold_base_wall_ms": _median(e.cold_base_wall_ms for e in examples),
        "median_residual_wall_ms": _median(e.stream_residual_wall_ms for e in examples),
        **_examples_figures(examples),
    }


def _examples_figures(examples: list[ExampleResult]) -> dict[str, float]:
    """How often the prompt's own examples pass, and what that says of the hidden tests."""
    return examples_figures((e.examples_passed, e.examples_total, e.stream_pass) for e in examples)


def write_results(folder: Path, results: dict[str, Any], name: str = RESULTS_FILE) -> Path:
    """Write folder/results.json, or another name (atomically: no reader sees half a file)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    partial = path.with_suffix(".json.partial")
    partial.write_text(json.dumps(results, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(partial, path)
    return path


def read_json(path: Path) -> dict[str, Any]:
    """A results file's JSON object; ResultsError naming the file when it cannot be read."""
    try:
        results = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ResultsError(f"{path.parent}: no readable {path.name}: {exc.strerror}") from exc
    except json.JSONDecodeError as exc:
        raise ResultsError(f"{path}: not JSON: {exc.msg}") from exc
    if not isinstance(results, dict):
        raise ResultsError(f"{path}: not a JSON object")
    return results


def read_results(folder: Path) -> dict[str, Any]:
    """Load and check folder/results.json."""
    path = folder / RESULTS_FILE
    results = read_json(path)
    problems = shape_problems(results)
    if problems:
        raise ResultsError(f"{path}: not a bench result: {'; '.join(problems[:5])}")
    return results


# Settings that change the answers or their cost: a resumed run must match on all of them.
RESUME_KEYS = ("suite", "model", "runtime", "adapter", "system_prompt", "acceptance", "dtype",
               "device", "threshold", "max_tokens", "prompt_format", "lookahead",
               "verify_chunk", "drafter", "drafter_mode", "shard")  # fmt: skip


def resume_run(folder: Path, meta: Mapping[str, Any]) -> BenchRun:
    """The run stored in folder/results.json, to be continued under the settings `meta`.

    An empty run when there is no results.json yet; ResultsError when the stored run was
    made with other settings (its figures could not be pooled with the new ones).
    """
    if not (folder / RESULTS_FILE).exists():
        return BenchRun()
    stored = read_results(folder)
    # runs written before an engine setting existed were made with its default
    defaults = {k: f.default for k, f in EngineConfig.model_fields.items()}
    # runs stored before there were two runtimes: torch, its lookahead, one verify pass
    defaults.update(runtime="torch", lookahead=8, verify_chunk=0)
    differ = [k for k in RESUME_KEYS if k in meta and stored.get(k, defaults.get(k)) != meta[k]]
    if differ:
        changes = ", ".join(f"{k} {stored.get(k)!r} -> {meta[k]!r}" for k in differ)
        raise ResultsError(f"{folder}: cannot resume a run made with other settings: {changes}")
    return run_from_results(stored, folder)


def run_from_results(results: Mapping[str, Any], folder: Path) -> BenchRun:
    """The measured examples and refusals of a stored run (exclusions are recomputed)."""
    names = {f.name for f in fields(ExampleResult)}
    try:
        examples = [ExampleResult(**{k: v for k, v in e.items() if k in names})
                    for e in results["examples"]]  # fmt: skip
    except TypeError as exc:
        raise ResultsError(f"{folder / RESULTS_FILE}: an example lacks a field: {exc}") from exc
    return BenchRun(examples=examples, errors=dict(results.get("errors") or {}))


def shape_problems(results: Any) -> list[str]:
    """Where `results` departs from the fixed shape; empty when it conforms."""
    if not isinstance(results, dict):
        return ["the document is not an object"]
    problems = _field_problems(results, TOP_FIELDS, "")
    if isinstance(results.get("summary"), dict):
        problems += _field_problems(results["summary"], SUMMARY_FIELDS, "summary.")
    for i, example in enumerate(results.get("examples") or []):
        if not isinstance(example, dict):
            problems.append(f"examples[{i}] is not an object")
            continue
        problems += _field_problems(example, EXAMPLE_FIELDS, f"examples[{i}].")
    if isinstance(results.get("examples"), list) and results.get("n") != len(results["examples"]):
        problems.append("n differs from the number of examples")
    return problems


def _field_problems(record: dict, fields: Mapping[str, type], where: str) -> list[str]:
    problems = []
    for key, kind in fields.items():
        if key not in record:
            problems.append(f"{where}{key} is missing")
        elif type(record[key]) is not kind:  # exact: a bool is not an int, an int not a float
            problems.append(f"{where}{key} should be {kind.__name__}")
    return problems


def _median(values: Iterable[float]) -> float:
    values = list(values)
    return float(statistics.median(values)) if values else 0.0


def _mean(values: Iterable[float]) -> float:
    values = list(values)
    return float(statistics.fmean(values)) if values else 0.0


def _rate(flags: Iterable[bool]) -> float:
    flags = list(flags)
    return sum(1 for flag in flags if flag) / len(flags) if flags else 0.0
