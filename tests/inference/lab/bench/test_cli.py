"""`prewrite bench` end to end on the small real model: files written, exact stream == base."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from inference import packs
from inference.lab.bench.results import shape_problems
from lsp_server.cli import main
from tests.paths import TEST_DATA

pytestmark = pytest.mark.timeout(600)

DATA = TEST_DATA / "bench"
MODEL = "smollm2-135m"


@pytest.mark.real_model
@pytest.mark.skipif(not packs.is_installed(MODEL), reason=f"needs the {MODEL} pack installed")
def test_bench_runs_three_problems_and_exact_stream_equals_base(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    suite = DATA / "mini.jsonl"  # three problems to stream and one single-sentence one
    code = main([
        "bench", "--suite", str(suite), "--model", MODEL, "--prompt-format", "chat",
        "--max-tokens", "96", "--acceptance", "exact", "--dtype", "float32",
        "--out", str(tmp_path),
    ])  # fmt: skip
    assert code == 0
    results = json.loads((tmp_path / "results.json").read_text(encoding="utf-8"))
    assert shape_problems(results) == []
    assert (results["n"], results["excluded"]) == (3, 1)
    assert results["excluded_tasks"] == {"mini/square": "1 unit(s): nothing to stream"}
    settings = (results["model"], results["acceptance"], results["dtype"])
    assert settings == (MODEL, "exact", "float32")
    for example in results["examples"]:
        assert example["stream_answer"] == example["base_answer"], example["task_id"]
        assert example["identical"] and example["identical_tokens"]
        assert example["stream_pass"] == example["base_pass"]
        assert example["base_forwards"] == example["cold_base_forwards"]
        assert example["stream_residual_forwards"] >= 1
        assert example["accepted_tokens"] <= example["draft_tokens"]
        assert example["drafting_forwards"] >= example["units"] - 1
    assert [e["units"] for e in results["examples"]] == [3, 3, 4]
    assert results["summary"]["identical_rate"] == 1.0
    assert (tmp_path / "speedup.png").read_bytes()[:4] == b"\x89PNG"
    printed = capsys.readouterr().out
    assert "Quality (%)" in printed and "mini (pass@1)" in printed


@pytest.mark.real_model
@pytest.mark.skipif(not packs.is_installed(MODEL), reason=f"needs the {MODEL} pack installed")
def test_pass1_scores_plain_greedy_answers(tmp_path: Path, capsys: pytest.CaptureFixture[str]):
    code = main([
        "bench", "pass1", "--suite", str(DATA / "mini.jsonl"), "--model", MODEL,
        "--prompt-format", "chat", "--max-tokens", "64", "--out", str(tmp_path),
    ])  # fmt: skip
    assert code == 0
    document = json.loads((tmp_path / "pass1.json").read_text(encoding="utf-8"))
    summary = document["summary"]
    assert summary["problems"] == 4 and len(document["answers"]) == 4
    passed = sum(a["passed"] for a in document["answers"])
    assert summary["pass_at_1"] == passed / 4
    assert set(summary["statuses"]) <= {"passed", "failed", "timeout", "crashed"}
    assert document["runtime"] in ("torch", "llamacpp")
    printed = capsys.readouterr().out
    assert "pass@1" in printed and "cut by us" in printed
    # every failure judged: cut by the budget, by us, or wrong
    split = json.loads((tmp_path / "split.json").read_text(encoding="utf-8"))["split"]
    assert sum(split["verdicts"].values()) == 4 and split["verdicts"]["passed"] == passed
    assert split["pass_at_1"] == split["pass_at_1_as_run"] == summary["pass_at_1"]
    assert all(answer["token_ids"] for answer in document["answers"])


@pytest.mark.real_model
@pytest.mark.skipif(not packs.is_installed(MODEL), reason=f"needs the {MODEL} pack installed")
def test_pass1_stopped_by_ctrl_c_resumes_without_decoding_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from inference.lab.bench import quality

    tested: list[str] = []
    real_test = quality.run_test

    def test_then_ctrl_c(problem, *args, **kwargs):  # type: ignore[no-untyped-def]
        if len(tested) == 2:
            raise KeyboardInterrupt
        tested.append(problem.task_id)
        return real_test(problem, *args, **kwargs)

    argv = ["bench", "pass1", "--suite", str(DATA / "mini.jsonl"), "--model", MODEL,
            "--max-tokens", "48", "--out", str(tmp_path), "--no-split"]  # fmt: skip
    monkeypatch.setattr(quality, "run_test", test_then_ctrl_c)
    assert main(argv) == 130
    stopped = json.loads((tmp_path / "pass1.json").read_text(encoding="utf-8"))
    assert stopped["complete"] is False and len(stopped["answers"]) == 2
    assert "--resume" in capsys.readouterr().err

    monkeypatch.setattr(quality, "run_test", real_test)
    assert main([*argv, "--resume"]) == 0
    done = json.loads((tmp_path / "pass1.json").read_text(encoding="utf-8"))
    assert done["complete"] is True and done["summary"]["problems"] == 4
    assert done["answers"][:2] == stopped["answers"]  # kept as they were, timings included
    assert [a["task_id"] for a in done["answers"][:2]] == tested

    assert main([*argv, "--resume", "--max-tokens", "32"]) == 2  # other settings: refused
    assert "max_tokens 48 -> 32" in capsys.readouterr().err
    assert json.loads((tmp_path / "pass1.json").read_text(encoding="utf-8")) == done
