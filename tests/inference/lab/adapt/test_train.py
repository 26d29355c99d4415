"""`adapt train` on a tiny random model: the loss, padding, checkpoints and resuming."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from pathlib import Path

import pytest
import torch
from peft import LoraConfig, get_peft_model
from safetensors.torch import load_file

from inference.adapters.adapter import quiet_peft
from inference.engine.prompting import PromptBuilder
from inference.errors import ConfigError
from inference.lab.adapt.batches import answer_loss, collate, make_features
from inference.lab.adapt.dataset import read_rows
from inference.lab.adapt.errors import CheckpointError, DatasetError
from inference.lab.adapt.settings import TrainSettings
from inference.lab.adapt.train import Trainer, run_training
from inference.runtimes.torch_runtime import load_model

pytestmark = [pytest.mark.usefixtures("one_torch_thread"), pytest.mark.timeout(60)]



@pytest.fixture
def data(reference_data: Path) -> Path:
    return reference_data


def settings(data: Path, out: Path, model: Path, **overrides) -> TrainSettings:
    values = {"data": data, "out": out, "model": str(model), "steps": 4, "batch_size": 4,
              "micro_batch": 2, "learning_rate": 1e-3, "checkpoint_every": 2, "eval_rows": 4,
              "dtype": "float64", "progress": False}  # fmt: skip
    return TrainSettings(**{**values, **overrides})


def features_and_model(data: Path, model_dir: Path):
    loaded = load_model(str(model_dir), torch.device("cpu"), torch.float64)
    builder = PromptBuilder(loaded.tokenizer, "raw")
    features = make_features(read_rows(data, "train"), builder, 2048, Counter())
    return loaded, features


def test_left_padding_leaves_each_sequences_loss_unchanged(data: Path, tiny_model_dir: Path):
    loaded, features = features_and_model(data, tiny_model_dir)
    three = sorted(features, key=lambda f: len(f.ids))[::4][:3]
    assert len({len(f.ids) for f in three}) == 3  # really padded
    cpu = torch.device("cpu")
    with torch.no_grad():
        together = answer_loss(loaded.model, collate(three, 0, cpu))
        alone = sum(answer_loss(loaded.model, collate([f], 0, cpu)) for f in three)
    assert torch.allclose(together, alone, rtol=1e-10)


def test_a_few_steps_lower_the_loss_on_a_fixed_batch(data: Path, tiny_model_dir: Path):
    loaded, features = features_and_model(data, tiny_model_dir)
    fixed = features[:4]
    torch.manual_seed(0)
    config = LoraConfig(r=8, lora_alpha=16, lora_dropout=0.0, task_type="CAUSAL_LM",
                        target_modules=["q_proj", "k_proj", "v_proj", "o_proj"])  # fmt: skip
    with quiet_peft():
        model = get_peft_model(loaded.model, config)
    run = TrainSettings(data=data, out=data, batch_size=4, micro_batch=2, learning_rate=1e-2)
    trainer = Trainer(model, run, fixed, 0, torch.device("cpu"))  # type: ignore[arg-type]
    before = trainer.evaluate(fixed)
    losses = [trainer.step(step)[0] for step in range(6)]
    after = trainer.evaluate(fixed)
    assert losses[0] == pytest.approx(before)  # step 0 sees the batch before any update
    assert after < before * 0.9


def test_resuming_continues_at_the_next_step_and_ends_where_one_run_ends(
    data: Path, tiny_model_dir: Path, tmp_path: Path
) -> None:
    straight = run_training(settings(data, tmp_path / "a", tiny_model_dir))
    assert straight["steps"] == 4
    half = run_training(settings(data, tmp_path / "b", tiny_model_dir, steps=2))
    assert half["steps"] == 2
    resumed = run_training(settings(data, tmp_path / "b", tiny_model_dir, resume=True))
    assert resumed["steps"] == 4
    log = [
        json.loads(line) for line in (tmp_path / "b" / "train-log.jsonl").read_text().splitlines()
    ]
    assert [row["step"] for row in log if "loss" in row] == [1, 2, 3, 4]
    checkpoints = sorted(p.name for p in (tmp_path / "b" / "checkpoints").iterdir())
    assert checkpoints == ["step-00000002", "step-00000004"]
    a = load_file(tmp_path / "a" / "adapter" / "adapter_model.safetensors")
    b = load_file(tmp_path / "b" / "adapter" / "adapter_model.safetensors")
    assert a.keys() == b.keys() and all(torch.equal(a[k], b[k]) for k in a)
    assert any(k.endswith("lora_B.weight") and a[k].abs().sum() > 0 for k in a)  # it learned


def test_checkpoints_are_not_overwritten_or_resumed_with_other_settings(
    data: Path, tiny_model_dir: Path, tmp_path: Path
) -> None:
    run_training(settings(data, tmp_path, tiny_model_dir, steps=2))
    with pytest.raises(CheckpointError, match="pass --resume"):
        run_training(settings(data, tmp_path, tiny_model_dir, steps=2))
    with pytest.raises(CheckpointError, match="learning_rate: 0.001 -> 0.002"):
        run_training(settings(data, tmp_path, tiny_model_dir, learning_rate=2e-3, resume=True))


def test_bad_training_inputs_are_clear_errors(
    data: Path, tiny_model_dir: Path, tmp_path: Path
) -> None:
    with pytest.raises(ConfigError, match="not a multiple of micro-batch 3"):
        run_training(settings(data, tmp_path / "x", tiny_model_dir, micro_batch=3))
    with pytest.raises(ConfigError, match="a system message needs chat prompts"):
        run_training(settings(data, tmp_path / "x", tiny_model_dir, system_prompt="Hi."))
    with pytest.raises(DatasetError, match="no readable manifest.json"):
        run_training(settings(tmp_path, tmp_path / "x", tiny_model_dir))
    foreign = tmp_path / "foreign"
    shutil.copytree(data, foreign)
    manifest = json.loads((foreign / "manifest.json").read_text())
    manifest.update(model="another-model", tokenizer="0" * 24)
    (foreign / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(DatasetError, match="another vocabulary"):
        run_training(settings(foreign, tmp_path / "x", tiny_model_dir))
    with pytest.raises(ConfigError, match="cannot put LoRA"):
        run_training(settings(data, tmp_path / "y", tiny_model_dir, target_modules=("c_attn",)))
