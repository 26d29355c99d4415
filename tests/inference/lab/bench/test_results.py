"""results.json's shape and summary, the printed table, the plot, `bench compare` and `merge`."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from inference.lab.bench.cli import _shard
from inference.lab.bench.compare import compare
from inference.lab.bench.errors import ResultsError
from inference.lab.bench.merge import merge
from inference.lab.bench.report import format_table, write_plot
from inference.lab.bench.results import (
    build_results,
    read_results,
    shape_problems,
    summarize,
    write_results,
)
from inference.lab.bench.runner import BenchRun, ExampleResult

pytestmark = pytest.mark.timeout(60)

META = {"suite": "humaneval", "model": "m", "acceptance": "exact", "dtype": "float32",
        "device": "cpu"}  # fmt: skip


def example(
    task: str, forwards: tuple[int, int], wall: tuple[float, float], verdicts: str
) -> ExampleResult:
    """An example from (base, residual) forwards and wall ms; verdicts: identical, base, stream."""
    identical, base_pass, stream_pass = (flag == "y" for flag in verdicts)
    return ExampleResult(
        task_id=task, units=3, base_forwards=forwards[0], stream_residual_forwards=forwards[1],
        base_wall_ms=wall[0], stream_residual_wall_ms=wall[1],
        accepted_tokens=forwards[0] if forwards[1] == 1 else 0, draft_tokens=forwards[0],
        identical=identical, identical_tokens=identical, base_pass=base_pass,
        stream_pass=stream_pass, cold_base_forwards=forwards[0], cold_base_wall_ms=2 * wall[0],
        drafting_forwards=forwards[0] + 3, generated_tokens=forwards[1] - 1, lookahead_tokens=0,
        base_tokens=forwards[0], base_finish="stop", stream_finish="stop",
        base_status="passed" if base_pass else "failed",
        stream_status="passed" if stream_pass else "failed", base_detail="", stream_detail="",
        base_answer="    return 1\n", stream_answer="    return 1\n",
    )  # fmt: skip


RUN = BenchRun(
    examples=[
        example("T/0", (20, 1), (1000.0, 100.0), "yyy"),
        example("T/1", (10, 5), (500.0, 250.0), "nyn"),
        example("T/2", (8, 10), (400.0, 500.0), "ynn"),
    ],
    excluded={"T/3": "1 unit(s): nothing to stream"},
)


def test_summary_figures() -> None:
    s = summarize(RUN.examples)
    assert s["median_forward_speedup"] == 2.0
    assert s["mean_forward_speedup"] == pytest.approx((20 + 2 + 0.8) / 3)
    assert s["median_wall_speedup"] == 2.0
    assert s["mean_wall_speedup"] == pytest.approx((10 + 2 + 0.8) / 3)
    assert s["pass_at_1_base"] == pytest.approx(2 / 3)
    assert s["pass_at_1_stream"] == pytest.approx(1 / 3)
    assert s["identical_rate"] == pytest.approx(2 / 3)
    assert s["below_1x_rate"] == pytest.approx(1 / 3)
    assert (s["median_residual_forwards"], s["median_base_forwards"]) == (5.0, 10.0)
    assert s["drafting_forwards_per_request"] == pytest.approx((23 + 13 + 11) / 3)
    assert s["one_forward_rate"] == pytest.approx(1 / 3)
    assert s["forwards_removed"] == pytest.approx(1 - 16 / 38)
    assert s["median_cold_wall_speedup"] == 4.0


def test_the_prompts_examples_split_pass_at_1_by_whether_they_passed() -> None:
    checked = [dataclasses.replace(e, examples_total=2, examples_passed=p)
               for e, p in zip(RUN.examples, (2, 1, 2), strict=True)]  # fmt: skip
    unchecked = example("T/9", (5, 1), (10.0, 1.0), "yyy")  # no examples: counts nowhere
    s = summarize([*checked, unchecked])
    assert (s["examples_checked"], s["examples_pass_rate"]) == (3.0, pytest.approx(2 / 3))
    # T/0 and T/2 passed their examples; of them T/0 passes the hidden tests; T/1 failed both
    assert (s["pass_at_1_examples_passed"], s["pass_at_1_examples_failed"]) == (0.5, 0.0)
    table = format_table({**META, "n": 4, "excluded": 0, "summary": s})
    assert "examples pass on 66.7% of 3 answers with examples" in table
    assert "where they pass 50.0% (n=2), where they fail 0.0% (n=1)" in table


def test_no_examples_give_zero_figures_under_the_same_keys() -> None:
    empty = summarize([])
    assert empty.keys() == summarize(RUN.examples).keys()
    assert set(empty.values()) == {0.0}


def test_results_json_has_the_fixed_shape(tmp_path: Path) -> None:
    path = write_results(tmp_path, build_results(RUN, META))
    results = json.loads(path.read_text(encoding="utf-8"))
    assert shape_problems(results) == []
    assert (results["n"], results["excluded"], results["interrupted"]) == (3, 1, False)
    assert results["examples"][0]["forward_speedup"] == 20.0
    assert read_results(tmp_path) == results


def test_shape_problems_are_named() -> None:
    results = json.loads(json.dumps(build_results(RUN, META)))
    del results["summary"]["identical_rate"]
    results["summary"]["median_base_forwards"] = 10
    results["examples"][1]["base_pass"] = 1
    results["examples"][2]["units"] = True
    results["n"] = 4
    assert shape_problems(results) == [
        "summary.identical_rate is missing",
        "summary.median_base_forwards should be float",
        "examples[1].base_pass should be bool",
        "examples[2].units should be int",
        "n differs from the number of examples",
    ]


def test_unreadable_result_folders_are_refused(tmp_path: Path) -> None:
    with pytest.raises(ResultsError, match="no readable results.json"):
        read_results(tmp_path)
    (tmp_path / "results.json").write_text('{"suite": "humaneval"}', encoding="utf-8")
    with pytest.raises(ResultsError, match="model is missing"):
        read_results(tmp_path)


def test_table_follows_the_seeds_table_1() -> None:
    table = format_table(build_results(RUN, META))
    header, _, columns, row = table.splitlines()[:4]
    assert "Quality (%)" in header and "Speedup, wall clock (x)" in header
    assert columns.split() == ["Benchmark", "base", "stream", "base", "stream", "mean", "median",
                               "mean", "median"]  # fmt: skip
    assert row.split() == ["humaneval", "(pass@1)", "66.7", "33.3", "10", "5", "7.60", "2.00",
                           "4.27", "2.00"]  # fmt: skip
    assert "n=3 (1 excluded)" in table


@pytest.mark.parametrize("run", [RUN, BenchRun()], ids=["examples", "no examples"])
def test_plot_is_a_png(tmp_path: Path, run: BenchRun) -> None:
    path = write_plot(build_results(run, META), tmp_path)
    assert path == tmp_path / "speedup.png"
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_compare_prints_deltas_and_changed_verdicts(tmp_path: Path) -> None:
    after = BenchRun(
        examples=[
            example("T/0", (20, 1), (1000.0, 100.0), "yyy"),
            example("T/1", (10, 1), (500.0, 50.0), "yyy"),
            example("T/4", (8, 1), (400.0, 50.0), "yyy"),
        ]
    )
    write_results(tmp_path / "a", build_results(RUN, META))
    write_results(tmp_path / "b", build_results(after, {**META, "dtype": "bfloat16"}))
    lines = compare(tmp_path / "a", tmp_path / "b").splitlines()
    assert "setting dtype: float32 -> bfloat16" in lines
    row = next(line for line in lines if line.startswith("median_forward_speedup"))
    assert row.split() == ["median_forward_speedup", "2", "10", "+8"]
    assert "tasks in both: 2; only in A: 1; only in B: 1" in lines
    assert "stream_pass: +1 [T/1] -0 []" in lines
    assert "identical: +1 [T/1] -0 []" in lines
    assert not any(line.startswith("base_pass:") for line in lines)


def test_merge_pools_shards_into_the_run_of_the_whole_suite(tmp_path: Path) -> None:
    whole = build_results(RUN, META)
    shards = [
        BenchRun(examples=[RUN.examples[0], RUN.examples[2]]),
        BenchRun(examples=[RUN.examples[1]], excluded=dict(RUN.excluded)),
    ]
    for i, shard in enumerate(shards, start=1):
        write_results(tmp_path / f"s{i}", build_results(shard, {**META, "shard": f"{i}/2"}))
    merged = merge([tmp_path / "s2", tmp_path / "s1"])
    assert shape_problems(merged) == []
    assert [e["task_id"] for e in merged["examples"]] == ["T/0", "T/1", "T/2"]
    assert (merged["n"], merged["excluded"], merged["summary"]) == (3, 1, whole["summary"])
    assert merged["shard"] is None and [m["shard"] for m in merged["merged_from"]] == ["2/2", "1/2"]


def test_merge_refuses_other_settings_and_overlapping_problems(tmp_path: Path) -> None:
    write_results(tmp_path / "a", build_results(RUN, META))
    write_results(tmp_path / "b", build_results(RUN, {**META, "dtype": "bfloat16"}))
    write_results(tmp_path / "c", build_results(BenchRun(examples=RUN.examples[1:2]), META))
    with pytest.raises(ResultsError, match="other settings: dtype 'float32' vs 'bfloat16'"):
        merge([tmp_path / "a", tmp_path / "b"])
    with pytest.raises(ResultsError, match="T/1 is in both"):
        merge([tmp_path / "a", tmp_path / "c"])
    with pytest.raises(ResultsError, match="at least two"):
        merge([tmp_path / "a"])
    with pytest.raises(ResultsError, match="no readable results.json"):
        merge([tmp_path / "a", tmp_path / "missing"])


@pytest.mark.parametrize("text", ["0/2", "3/2", "2", "a/b", "1/0"])
def test_a_bad_shard_is_refused(text: str) -> None:
    import argparse

    with pytest.raises(argparse.ArgumentTypeError, match="expected K/N"):
        _shard(text)
    assert _shard(" 2/4 ") == (2, 4)
