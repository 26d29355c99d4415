"""`prewrite drafter bench`: residual decodes with and without the drafter, side by side.

For each problem the final prompt is decoded from a warm prefix (everything above the last
docstring unit already encoded: the residual a stream pays when its draft is rejected
whole) three ways, back to back: plain AR, the drafter in the seed's two-forward steps, and
the drafter fused into one forward per step. Tokens per forward (TPF) and wall clock are
compared; in exact mode all three answers must be identical.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import Any

from tqdm import tqdm

from inference.api import Completion, Request
from inference.engine import Engine
from inference.lab.problems.problem import Problem
from inference.lab.problems.segment import DocstringNotFound, split_prompt

MODES = ("plain", "seed", "fused")


@dataclass
class DecodeResult:
    """One problem's decode in every mode: tokens, forwards, wall ms, and agreement."""

    task_id: str
    tokens: int
    forwards: dict[str, int]
    wall_ms: dict[str, float]
    drafter_tokens: dict[str, int]
    identical: bool  # every mode gave plain's tokens

    def tpf(self, mode: str) -> float:
        """Tokens per forward of one mode."""
        return self.tokens / max(self.forwards[mode], 1)


def measure_problem(engine: Engine, problem: Problem) -> DecodeResult:
    """Decode one problem's final prompt in every mode, back to back."""
    final, warm = _requests(problem)
    drafter = engine.runtime.drafter
    assert drafter is not None, "the engine has no drafter"
    answers: dict[str, Completion] = {}
    for mode in MODES:
        if mode != "plain":
            drafter.mode = mode  # type: ignore[assignment]
        answers[mode] = engine.generate(final, warm_from=warm, use_drafter=mode != "plain")
    plain = answers["plain"]
    return DecodeResult(
        task_id=problem.task_id,
        tokens=len(plain.token_ids),
        forwards={m: a.cost.forwards for m, a in answers.items()},
        wall_ms={m: a.cost.wall_ms for m, a in answers.items()},
        drafter_tokens={m: a.cost.drafter_tokens for m, a in answers.items()},
        identical=all(a.token_ids == plain.token_ids for a in answers.values()),
    )


def measure(engine: Engine, problems: list[Problem], progress: bool = True) -> list[DecodeResult]:
    """Every problem in turn; Ctrl-C keeps what was finished."""
    results: list[DecodeResult] = []
    bar = tqdm(problems, desc="drafter", unit="problem", disable=not progress, dynamic_ncols=True)
    try:
        for problem in bar:
            results.append(measure_problem(engine, problem))
            bar.set_postfix_str(_running(results), refresh=False)
    except KeyboardInterrupt:
        pass
    finally:
        bar.close()
    return results


def summarize(results: list[DecodeResult]) -> dict[str, Any]:
    """Pooled TPF per mode (all tokens / all forwards), wall speedups, identical rate."""
    tokens = sum(r.tokens for r in results)
    summary: dict[str, Any] = {"n": len(results), "tokens": tokens}
    for mode in MODES:
        forwards = sum(r.forwards[mode] for r in results)
        summary[f"tpf_{mode}"] = tokens / forwards if forwards else 0.0
        summary[f"median_tpf_{mode}"] = _median(r.tpf(mode) for r in results)
        summary[f"wall_ms_{mode}"] = sum(r.wall_ms[mode] for r in results)
        summary[f"drafter_tokens_{mode}"] = sum(r.drafter_tokens[mode] for r in results)
    for mode in ("seed", "fused"):
        summary[f"wall_speedup_{mode}"] = summary["wall_ms_plain"] / max(
            summary[f"wall_ms_{mode}"], 1e-3
        )
        summary[f"median_wall_speedup_{mode}"] = _median(
            r.wall_ms["plain"] / max(r.wall_ms[mode], 1e-3) for r in results
        )
    summary["identical_rate"] = (
        sum(r.identical for r in results) / len(results) if results else 0.0
    )
    return summary


def format_summary(summary: dict[str, Any]) -> str:
    """A small table: TPF and wall per mode."""
    lines = [f"{summary['n']} residual decodes, {summary['tokens']} tokens; identical to plain: "
             f"{summary['identical_rate']:.0%}",
             f"{'mode':8} {'TPF':>6} {'median TPF':>11} {'wall s':>8} {'speedup':>8}"]  # fmt: skip
    for mode in MODES:
        speedup = summary.get(f"wall_speedup_{mode}", 1.0)
        lines.append(
            f"{mode:8} {summary[f'tpf_{mode}']:6.2f} {summary[f'median_tpf_{mode}']:11.2f} "
            f"{summary[f'wall_ms_{mode}'] / 1000:8.1f} {speedup:7.2f}x"
        )
    return "\n".join(lines)


def records(results: list[DecodeResult]) -> list[dict[str, Any]]:
    """The per-problem records as stored."""
    return [{**asdict(r), "tpf": {m: r.tpf(m) for m in MODES}} for r in results]


def _requests(problem: Problem) -> tuple[Request, Request | None]:
    """The final prompt and the warm prefix above its last unit (None if not streamable)."""
    try:
        spec = split_prompt(problem.prompt)
    except DocstringNotFound:
        return Request(problem.prompt), None
    if not spec.streamable:
        return Request(spec.prompt(len(spec.units))), None
    prompts = spec.prompts()
    return Request(prompts[-1]), Request(prompts[-2])


def _running(results: list[DecodeResult]) -> str:
    summary = summarize(results)
    return f"TPF seed {summary['tpf_seed']:.2f} fused {summary['tpf_fused']:.2f}"


def _median(values: Iterable[float]) -> float:
    values = list(values)
    return float(statistics.median(values)) if values else 0.0
