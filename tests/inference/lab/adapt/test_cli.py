"""`prewrite adapt build-data`, `adapt train` and `bench --adapter` end to end on a tiny model."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import torch

from inference.lab.bench.results import shape_problems
from lsp_server.cli import main
from tests.paths import REPO, TEST_DATA

pytestmark = pytest.mark.timeout(120)

DATA = TEST_DATA
MODEL_OPTIONS = ["--dtype", "float64", "--threads", "1"]


@pytest.fixture(autouse=True)
def restore_threads():
    """The commands pin one torch thread; put the process's setting back afterwards."""
    threads = torch.get_num_threads()
    yield
    torch.set_num_threads(threads)


def test_build_train_and_bench_before_after(
    tiny_model_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for source in (DATA / "adapt" / "corpus").glob("*.py.txt"):
        shutil.copy(source, corpus / source.name.removesuffix(".txt"))
    model = ["--model", str(tiny_model_dir), *MODEL_OPTIONS]
    assert main(["adapt", "build-data", "--source", str(corpus), "--target", "reference",
                 "--out", str(tmp_path / "data"), "--quiet"]) == 0  # fmt: skip
    printed = capsys.readouterr().out
    assert "removed as in humaneval: 0" in printed and "train_rows" in printed

    assert main(["adapt", "train", "--data", str(tmp_path / "data"), "--steps", "2",
                 "--batch-size", "4", "--micro-batch", "2", "--checkpoint-every", "1",
                 "--out", str(tmp_path / "run"), "--quiet", *model]) == 0  # fmt: skip
    adapter = tmp_path / "run" / "adapter"
    manifest = json.loads((adapter / "prewrite-adapter.json").read_text(encoding="utf-8"))
    assert manifest["base_model"] == str(tiny_model_dir) and manifest["steps"] == 2
    lora = {"rank": 8, "alpha": 16, "dropout": 0.05,
            "target_modules": ["q_proj", "k_proj", "v_proj", "o_proj"]}  # fmt: skip
    assert manifest["lora"] == lora
    assert '"seconds_per_step"' in capsys.readouterr().out

    bench = tmp_path / "bench"
    assert main(["bench", "--suite", str(DATA / "bench" / "mini.jsonl"), "--adapter",
                 str(adapter), "--max-tokens", "8", "--out", str(bench), *model]) == 0  # fmt: skip
    before = json.loads((bench / "before" / "results.json").read_text(encoding="utf-8"))
    after = json.loads((bench / "after" / "results.json").read_text(encoding="utf-8"))
    assert shape_problems(before) == [] and shape_problems(after) == []
    assert (before["adapter"], after["adapter"]) == (None, str(adapter))
    assert [e["task_id"] for e in before["examples"]] == [e["task_id"] for e in after["examples"]]
    table = (bench / "table3.txt").read_text(encoding="utf-8")
    assert table.startswith("Table 3: adaptation to incomplete requests, before -> after")
    assert "median speedup" in table and "mini (pass@1)" in table
    assert table in capsys.readouterr().out


def test_sigterm_stops_training_like_ctrl_c_and_keeps_a_checkpoint(
    tiny_model_dir: Path, reference_data: Path, tmp_path: Path
) -> None:
    """`timeout` and job schedulers send SIGTERM: the run must checkpoint what it finished."""
    import os
    import signal
    import subprocess
    import sys
    import time

    out = tmp_path / "run"
    command = [sys.executable, "-m", "lsp_server.cli", "adapt", "train", "--data",
               str(reference_data), "--steps", "100000", "--batch-size", "2", "--micro-batch",
               "2", "--checkpoint-every", "100000", "--out", str(out), "--quiet",
               "--model", str(tiny_model_dir), *MODEL_OPTIONS]  # fmt: skip
    process = subprocess.Popen(
        command,
        cwd=REPO,
        env={**os.environ, "HF_HUB_OFFLINE": "1"},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    log = out / "train-log.jsonl"
    deadline = time.monotonic() + 120
    while not (log.is_file() and log.read_text(encoding="utf-8").count('"step"') >= 2):
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, "training logged no steps in 120 s"
        time.sleep(0.2)
    process.send_signal(signal.SIGTERM)
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 130, stderr
    assert "interrupted" in stderr
    checkpoints = sorted((out / "checkpoints").iterdir())
    assert len(checkpoints) == 1 and (checkpoints[0] / "adapter_model.safetensors").is_file()
    assert not (out / "adapter").exists()  # the final adapter only after the whole budget
