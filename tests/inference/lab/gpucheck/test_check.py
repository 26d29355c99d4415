"""`prewrite gpu-check --dry-run`: the GPU check's whole path on the CPU, with tiny stand-ins."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from inference.lab.gpucheck.check import CheckOptions, verdict
from inference.lab.gpucheck.models import SHAPES, shape_params

pytestmark = pytest.mark.timeout(300)
SHAPE_NAMES = ["qwen2.5-coder-1.5b", "qwen2.5-coder-7b"]


@pytest.fixture(scope="module")
def dry_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, dict[str, Any]]:
    """The command's finished process and the JSON it wrote."""
    out = tmp_path_factory.mktemp("gpu-check") / "gpu.json"
    command = [sys.executable, "-m", "lsp_server.cli", "gpu-check", "--dry-run", "--out", str(out)]
    done = subprocess.run(command, capture_output=True, text=True, timeout=280)
    assert out.is_file(), done.stderr[-3000:]
    return done, json.loads(out.read_text(encoding="utf-8"))


def test_the_dry_run_passes_and_prints_its_table(dry_run: tuple[Any, dict[str, Any]]):
    done, document = dry_run
    assert done.returncode == 0, done.stderr[-3000:]
    assert document["dry_run"] is True and document["verdict"]["ok"] is True
    assert document["dtype"] == "float32" and document["reference_dtype"] == "float64"
    for name in SHAPE_NAMES:
        assert f"| {name} |" in done.stdout
    assert "bench-lsp" in done.stdout and "verdict: ok" in done.stdout


def test_exact_streaming_equals_plain_greedy_in_both_dtypes(dry_run: tuple[Any, dict[str, Any]]):
    _, document = dry_run
    assert list(document["models"]) == SHAPE_NAMES
    for model in document["models"].values():
        assert model["errors"] == {} and model["stand_in"] is True
        for key in ("exact", "exact_reference"):
            assert [s["spec"] for s in model[key]] == [
                "own/clamp", "own/word_counts", "own/parse_duration",
            ]  # fmt: skip
            assert all(s["identical"] for s in model[key]), model[key]
        runs = model["exact"]
        assert all(s["requests"] > 1 and s["drafting_forwards"] > 0 for s in runs)
        assert sum(s["answer_tokens"] for s in runs) > 20  # the answers say something


def test_a_forward_of_each_size_is_timed(dry_run: tuple[Any, dict[str, Any]]):
    _, document = dry_run
    for model in document["models"].values():
        assert sorted(int(n) for n in model["forward_ms"]) == [1, 9, 64, 150]
        assert all(ms > 0 for ms in model["forward_ms"].values())
        assert model["greedy_ms_per_token"] > 0


def test_typed_sessions_ran_through_the_real_server(dry_run: tuple[Any, dict[str, Any]]):
    _, document = dry_run
    run = document["bench_lsp"]
    assert run["ok"] is True and run["model"] == SHAPE_NAMES[0]
    assert run["runtime"]["kind"] == "torch" and run["runtime"]["dtype"] == "float32"
    assert [s["name"] for s in run["sessions"]] == ["own/clamp", "own/word_counts"]
    for session in run["sessions"]:
        assert session["trigger_ms"] > 0 and session["conventional_ms"] > 0
        assert session["identical"] is True  # the server's streamed answer is its plain one
    assert run["summary"]["trigger_p50_ms"] > 0


def test_the_verdict_fails_on_a_difference_a_missing_figure_or_a_failed_step(
    dry_run: tuple[Any, dict[str, Any]],
):
    _, document = dry_run
    options = CheckOptions(out=Path("unused"), dry_run=True, lsp_sessions=2)
    assert verdict(document, options)["ok"] is True

    def broken(change: Any) -> dict[str, Any]:
        doctored = copy.deepcopy(document)
        change(doctored)
        return verdict(doctored, options)

    model = SHAPE_NAMES[1]
    parted = broken(lambda d: d["models"][model]["exact_reference"][0].update(identical=False))
    assert parted["exact_reference"] is False and parted["ok"] is False
    untimed = broken(lambda d: d["models"][model]["forward_ms"].pop("150"))
    assert untimed["forward_ms_complete"] is False and untimed["ok"] is False
    failed = broken(lambda d: d["models"][model]["errors"].update(exact="Traceback ..."))
    assert failed["failed_steps"] == [f"{model}: exact"] and failed["ok"] is False
    no_server = broken(lambda d: d["bench_lsp"].update(ok=False))
    assert no_server["bench_lsp"] is False and no_server["ok"] is False
    missing = broken(lambda d: d["models"].pop(model))
    assert missing["ok"] is False


def test_the_shapes_are_those_of_qwen2_5_coder_1_5b_and_7b():
    # the model cards: 1.54B and 7.61B parameters, 28 layers each
    assert shape_params(SHAPES["qwen2.5-coder-1.5b"]) // 10**7 == 154
    assert shape_params(SHAPES["qwen2.5-coder-7b"]) // 10**7 == 761
    assert SHAPES["qwen2.5-coder-1.5b"]["tie_word_embeddings"] is True
    assert SHAPES["qwen2.5-coder-7b"]["tie_word_embeddings"] is False
