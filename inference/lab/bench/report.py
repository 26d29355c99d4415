"""What a person reads: the seed's Table 1 layout printed, and the speedup histogram (Figure 1)."""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import Any

from inference.lab.bench.examples import examples_line

PLOT_FILE = "speedup.png"


def format_table(results: dict[str, Any]) -> str:
    """The seed's Table 1 row for this run, with the run's settings and the other figures below."""
    s = results["summary"]
    name = f"{_suite_name(results['suite'])} (pass@1)"
    width = max(len(name), len("Benchmark"))
    rows = [
        f"{'':{width}}  {'Quality (%)':>13}  {'Forwards after':>14}  "
        f"{'Speedup, forwards (x)':>21}  {'Speedup, wall clock (x)':>23}",
        f"{'':{width}}  {'':>13}  {'final token':>14}",
        f"{'Benchmark':{width}}  {'base':>6} {'stream':>6}  {'base':>6} {'stream':>7}  "
        f"{'mean':>10} {'median':>10}  {'mean':>11} {'median':>11}",
        f"{name:{width}}  {100 * s['pass_at_1_base']:6.1f} {100 * s['pass_at_1_stream']:6.1f}  "
        f"{s['median_base_forwards']:6g} {s['median_residual_forwards']:7g}  "
        f"{s['mean_forward_speedup']:10.2f} {s['median_forward_speedup']:10.2f}  "
        f"{s['mean_wall_speedup']:11.2f} {s['median_wall_speedup']:11.2f}",
    ]
    return "\n".join(rows + [""] + _notes(results))


def format_adaptation(before: dict[str, Any], after: dict[str, Any]) -> str:
    """The seed's Table 3 row (quality and median speedup, before -> after), with more figures."""
    a, b = before["summary"], after["summary"]
    columns = [
        ("quality", 100 * a["pass_at_1_stream"], 100 * b["pass_at_1_stream"], ".1f"),
        ("median speedup", a["median_forward_speedup"], b["median_forward_speedup"], ".2f"),
        ("mean speedup", a["mean_forward_speedup"], b["mean_forward_speedup"], ".2f"),
        ("median wall", a["median_wall_speedup"], b["median_wall_speedup"], ".2f"),
        ("drafts kept", drafts_kept(before), drafts_kept(after), ".2f"),
        ("one forward (%)", 100 * a.get("one_forward_rate", 0.0),
         100 * b.get("one_forward_rate", 0.0), ".1f"),
    ]  # fmt: skip
    cells = [f"{old:{fmt}} -> {new:{fmt}}" for _, old, new, fmt in columns]
    widths = [max(len(name), len(cell)) for (name, *_), cell in zip(columns, cells, strict=True)]
    model, suite = after["model"], f"{_suite_name(after['suite'])} (pass@1)"
    head = [f"{'Model':{len(model)}}", f"{'Benchmark':{len(suite)}}"]
    head += [f"{name:>{w}}" for (name, *_), w in zip(columns, widths, strict=True)]
    row = [model, suite] + [f"{cell:>{w}}" for cell, w in zip(cells, widths, strict=True)]
    return "\n".join([
        "Table 3: adaptation to incomplete requests, before -> after",
        "  ".join(head),
        "  ".join(row),
        "",
        f"adapter {after.get('adapter')}; n={before['n']} -> {after['n']}; quality is "
        "pass@1 of the streamed answers; speedups are residual, in forwards unless marked wall",
        f"pass@1 of plain decoding: {100 * a['pass_at_1_base']:.1f} -> "
        f"{100 * b['pass_at_1_base']:.1f}; drafts kept: share of draft tokens the final "
        "verify pass accepted",
    ])  # fmt: skip


def drafts_kept(results: dict[str, Any]) -> float:
    """Share of the draft tokens offered at finalize that were accepted (seed: 0.27 -> 0.43)."""
    offered = sum(e["draft_tokens"] for e in results["examples"])
    kept = sum(e["accepted_tokens"] for e in results["examples"])
    return kept / offered if offered else 0.0


def _notes(results: dict[str, Any]) -> list[str]:
    s = results["summary"]
    interrupted = ", interrupted" if results.get("interrupted") else ""
    return [
        f"{results['model']}, {results['acceptance']} acceptance, {results['dtype']}"
        f" on {results.get('runtime', 'torch')} ({results.get('device', '?')}, "
        f"{results.get('threads', '?')} threads); n={results['n']}"
        f" ({results['excluded']} excluded{interrupted})",
        f"wall clock is against the warm base (prefix KV reused); against the cold base: "
        f"mean {s.get('mean_cold_wall_speedup', 0.0):.2f}x, "
        f"median {s.get('median_cold_wall_speedup', 0.0):.2f}x",
        f"identical answers {_pct(s['identical_rate'])}; below 1x {_pct(s['below_1x_rate'])} "
        f"(forwards), {_pct(s.get('wall_below_1x_rate', 0.0))} (wall)",
        f"finished in one residual forward {_pct(s.get('one_forward_rate', 0.0))}; "
        f"draft kept whole {_pct(s.get('draft_kept_whole_rate', 0.0))}, "
        f"kept none {_pct(s.get('draft_kept_none_rate', 0.0))}",
        f"forwards a user waits through removed {_pct(s.get('forwards_removed', 0.0))}; "
        f"drafting forwards per request {s['drafting_forwards_per_request']:.1f}",
        examples_line(s),
    ]


def write_plot(results: dict[str, Any], folder: Path) -> Path:
    """Per-example residual speedup histograms on a log axis, forwards and wall clock."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(10, 4), layout="constrained")
    FigureCanvasAgg(figure)  # render with Agg; no pyplot, no global backend state
    panels = (("forward_speedup", "forwards"), ("wall_speedup", "wall clock (warm base)"))
    for axes, (key, label) in zip(figure.subplots(1, 2), panels, strict=True):
        _histogram(axes, [_speedup(e, key) for e in results["examples"]], label)
    figure.suptitle(
        f"{_suite_name(results['suite'])}: {results['model']}, {results['acceptance']}, "
        f"{results['dtype']} (n={results['n']})"
    )
    path = folder / PLOT_FILE
    figure.savefig(path, dpi=120)
    return path


def _histogram(axes: Any, speedups: list[float], label: str) -> None:
    from matplotlib.ticker import MaxNLocator

    axes.set_xscale("log")
    axes.yaxis.set_major_locator(MaxNLocator(integer=True))
    axes.set_xlabel(f"residual speedup, {label} (x)")
    axes.set_ylabel("examples")
    if not speedups:
        axes.text(0.5, 0.5, "no examples", ha="center", transform=axes.transAxes)
        return
    low, high = min(min(speedups), 0.5), max(max(speedups), 2.0)
    bins = [low * (high / low) ** (i / 30) for i in range(31)]  # log-spaced edges
    axes.hist(speedups, bins=bins, color="tab:blue", alpha=0.8)
    median, mean = statistics.median(speedups), statistics.fmean(speedups)
    axes.axvline(1.0, color="gray", linestyle=":", label="1x")
    axes.axvline(median, color="tab:red", label=f"median {median:.2f}x")
    axes.axvline(mean, color="tab:green", linestyle="--", label=f"mean {mean:.2f}x")
    axes.legend(loc="upper right")


def _speedup(example: dict[str, Any], key: str) -> float:
    if key in example:
        return float(example[key])
    if key == "forward_speedup":  # a results file written without the derived keys
        return example["base_forwards"] / max(example["stream_residual_forwards"], 1)
    return example["base_wall_ms"] / max(example["stream_residual_wall_ms"], 1e-3)


def _suite_name(suite: str) -> str:
    return suite if suite == "humaneval" else Path(suite).name.split(".")[0]


def _pct(rate: float) -> str:
    return f"{100 * rate:.1f}%"
