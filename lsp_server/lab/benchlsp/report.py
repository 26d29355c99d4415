"""`prewrite bench-lsp` figures: per configuration p50/p90/p95, a table, JSON and a CDF plot."""

from __future__ import annotations

import json
import statistics
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from lsp_server.client import percentile
from lsp_server.lab.benchlsp.run import SessionResult

RESULTS_FILE = "bench-lsp.json"
# answer lengths in tokens: short below 50, long from 120
LENGTHS = (("short", 0, 50), ("medium", 50, 120), ("long", 120, 1 << 30))
PLOT_FILE = "bench-lsp-cdf.png"


Configuration = tuple[str, float, int, int]  # (typist profile, cps, pause_ms, typists)


def configuration(result: SessionResult) -> Configuration:
    return result.profile, result.cps, result.pause_ms, result.typists


def configurations(results: Sequence[SessionResult]) -> list[Configuration]:
    """The configurations measured, in the order they ran."""
    return list(dict.fromkeys(configuration(r) for r in results))


def summarize(results: Sequence[SessionResult]) -> list[dict[str, Any]]:
    """One summary per configuration."""
    rows = []
    for profile, cps, pause, typists in configurations(results):
        group = [r for r in results if configuration(r) == (profile, cps, pause, typists)]
        trigger = [r.trigger_ms for r in group]
        conventional = [r.conventional_ms for r in group]
        llama = [r.extra["llamacpp_ms"] for r in group if "llamacpp_ms" in r.extra]
        drafting = [r.drafting_forwards for r in group if r.drafting_forwards is not None]
        row: dict[str, Any] = {
            "profile": profile, "cps": cps, "pause_ms": pause, "typists": typists,
            "sessions": len(group),
            **_quantiles("trigger", trigger), **_quantiles("conventional", conventional),
            "zero_forward_rate": sum(r.residual_forwards == 0 for r in group) / len(group),
            "identical_rate": sum(r.identical for r in group) / len(group),
            "drafting_forwards_per_session": statistics.mean(drafting) if drafting else None,
            "typing_requests_per_session": statistics.mean(r.typing_requests for r in group),
            "engine_busy_share": _busy_share(group),
            "forwards_left_mean": statistics.mean(r.residual_forwards for r in group),
            "parts": _parts(group),
        }  # fmt: skip
        if llama:
            row.update(_quantiles("llamacpp", llama))
            row["llamacpp_same_answer_rate"] = statistics.mean(
                r.extra["llamacpp_same"] for r in group if "llamacpp_same" in r.extra
            )
            row["median_speedup_vs_llamacpp"] = row["llamacpp_p50_ms"] / max(
                row["trigger_p50_ms"], 1e-3
            )
        rows.append(row)
    return rows


def _parts(group: Sequence[SessionResult]) -> dict[str, dict[str, Any]]:
    """The same figures for the tuned and held-out splits, each answer length, and each
    language where there are several."""
    languages = list(dict.fromkeys(r.language for r in group))
    by_language = {lang: [r for r in group if r.language == lang] for lang in languages}
    parts = {
        "tuned": [r for r in group if not r.held_out],
        "held-out": [r for r in group if r.held_out],
        **{
            name: [r for r in group if low <= r.answer_tokens < high]
            for name, low, high in LENGTHS
        },
        **(by_language if len(by_language) > 1 else {}),
    }
    return {name: _part(results) for name, results in parts.items() if results}


def _part(group: Sequence[SessionResult]) -> dict[str, Any]:
    trigger = [r.trigger_ms for r in group]
    return {
        "sessions": len(group),
        "trigger_p50_ms": percentile(trigger, 50),
        "trigger_p90_ms": percentile(trigger, 90),
        "zero_forward_rate": sum(r.residual_forwards == 0 for r in group) / len(group),
        "identical_rate": sum(r.identical for r in group) / len(group),
        "forwards_left_mean": statistics.mean(r.residual_forwards for r in group),
        "answer_tokens_mean": statistics.mean(r.answer_tokens for r in group),
    }


def format_parts(summary: Sequence[dict[str, Any]]) -> str:
    """The second printed table: each configuration by split and by answer length."""
    head = (
        "| typist | cps | pause | typists | part | sessions | streaming p50 / p90 ms | "
        "zero-forward | identical | forwards left (mean) | answer tokens (mean) |"
    )
    lines = [head, "|" + "---|" * 11]
    for row in summary:
        for name, part in row["parts"].items():
            lines.append(
                f"| {row['profile']} | {row['cps']:g} | {row['pause_ms']} ms | {row['typists']} | "
                f"{name} | {part['sessions']} | {part['trigger_p50_ms']:.0f} / "
                f"{part['trigger_p90_ms']:.0f} | {100 * part['zero_forward_rate']:.0f}% | "
                f"{100 * part['identical_rate']:.0f}% | {part['forwards_left_mean']:.1f} | "
                f"{part['answer_tokens_mean']:.0f} |"
            )
    return "\n".join(lines)


def format_table(summary: Sequence[dict[str, Any]], runtime: str) -> str:
    """The printed table: trigger to answer against both conventional requests."""
    head = (
        "| typist | cps | pause | typists | streaming p50 / p90 / p95 ms | zero-forward | "
        "identical | server conventional p50 / p95 | llama.cpp conventional p50 / p95 | "
        "x vs llama.cpp | drafting fw/session | engine busy while typing |"
    )
    lines = [f"runtime: {runtime}", head, "|" + "---|" * 12]
    for row in summary:
        llama = (
            f"{row['llamacpp_p50_ms']:.0f} / {row['llamacpp_p95_ms']:.0f}"
            if "llamacpp_p50_ms" in row
            else "-"
        )
        ratio = f"{row['median_speedup_vs_llamacpp']:.1f}" if "llamacpp_p50_ms" in row else "-"
        drafting = row["drafting_forwards_per_session"]
        lines.append(
            f"| {row['profile']} | {row['cps']:g} | {row['pause_ms']} ms | {row['typists']} | "
            f"{row['trigger_p50_ms']:.0f} / {row['trigger_p90_ms']:.0f} / "
            f"{row['trigger_p95_ms']:.0f} | {100 * row['zero_forward_rate']:.0f}% | "
            f"{100 * row['identical_rate']:.0f}% | {row['conventional_p50_ms']:.0f} / "
            f"{row['conventional_p95_ms']:.0f} | {llama} | {ratio} | "
            f"{'-' if drafting is None else f'{drafting:.0f}'} | "
            f"{_percent(row['engine_busy_share'])} |"
        )
    return "\n".join(lines)


def write_results(
    folder: Path, meta: dict[str, Any], results: Sequence[SessionResult]
) -> Path:
    """bench-lsp.json: the settings, the summaries and every session."""
    from dataclasses import asdict

    folder.mkdir(parents=True, exist_ok=True)
    sessions = [{k: v for k, v in asdict(r).items() if k not in ("final_text", "warm_text")}
                for r in results]  # fmt: skip
    document = {**meta, "summary": summarize(results), "sessions": sessions}
    path = folder / RESULTS_FILE
    path.write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def write_cdf(folder: Path, results: Sequence[SessionResult]) -> Path:
    """CDF of trigger-to-answer: streaming against both conventional requests, per config."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(7, 4.5))
    for profile, cps, pause, typists in configurations(results):
        group = [r for r in results if configuration(r) == (profile, cps, pause, typists)]
        label = f"{profile}, {cps:g} cps, {pause} ms" + (
            f", {typists} typists" if typists > 1 else ""
        )
        _cdf(axes, [r.trigger_ms for r in group], f"streaming, {label}", "-")
        _cdf(axes, [r.conventional_ms for r in group], f"server conventional, {label}", ":")
    llama = {r.name: r.extra["llamacpp_ms"] for r in results if "llamacpp_ms" in r.extra}
    if llama:
        _cdf(axes, list(llama.values()), "llama.cpp conventional", "--")
    axes.set_xscale("log")
    axes.set_xlabel("trigger to answer (ms, log scale)")
    axes.set_ylabel("share of sessions")
    axes.grid(alpha=0.3)
    axes.legend(fontsize=7)
    path = folder / PLOT_FILE
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    plt.close(figure)
    return path


def _cdf(axes: Any, values: list[float], label: str, style: str) -> None:
    ordered = sorted(max(v, 0.01) for v in values)
    shares = [(i + 1) / len(ordered) for i in range(len(ordered))]
    axes.step(ordered, shares, where="post", linestyle=style, label=label)


def _busy_share(group: Sequence[SessionResult]) -> float | None:
    """The engine's share of the wall clock while the group typed (None: not measured)."""
    several = group[0].typists > 1  # the typists shared one window: each result holds it
    pairs = [(r.engine_busy_s, r.window_s) for r in (group[:1] if several else group)]
    wall = sum(w for _, w in pairs)
    return sum(b for b, _ in pairs) / wall if wall > 0 else None


def _percent(share: float | None) -> str:
    return "-" if share is None else f"{100 * share:.0f}%"


def _quantiles(name: str, values: Sequence[float]) -> dict[str, float]:
    return {
        f"{name}_p50_ms": percentile(values, 50),
        f"{name}_p90_ms": percentile(values, 90),
        f"{name}_p95_ms": percentile(values, 95),
    }
