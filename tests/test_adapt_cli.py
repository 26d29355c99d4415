"""`prewrite adapt build-data`, `adapt train` and `bench --adapter` end to end on a tiny model."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import torch

from inference.bench.results import shape_problems
from lsp_server.cli import main

DATA = Path(__file__).parent / "data"
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
