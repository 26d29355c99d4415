"""`prewrite drafter train`: distil the model into a gated LoRA that drafts blocks in one forward.

Data is the adaptation data builder's (`prewrite adapt build-data`): prompts with the model's
own greedy answers. The teacher is the AR model itself at the clean positions of the same
forward (`distill.py`), so no teacher outputs are stored. Checkpoints, resume and the
training loop are the adaptation trainer's.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from dataclasses import asdict
from typing import Any

import torch
from peft import PeftModel

from inference.adapters.drafter import DRAFTER_KIND
from inference.adapters.gate import PositionGate
from inference.engine.prompting import PromptBuilder
from inference.errors import ConfigError
from inference.lab.adapt.batches import Feature, make_features
from inference.lab.adapt.dataset import MANIFEST, TRAIN, VALIDATION, read_manifest, read_rows
from inference.lab.adapt.errors import DatasetError
from inference.lab.adapt.train import Trainer, model_to_train, run_trainer
from inference.lab.drafter.distill import block_for, build_sequence, distill_loss
from inference.runtimes.device import resolve_device, resolve_dtype, set_threads
from inference.runtimes.torch_runtime import load_model

DRAFTER = "drafter"


class DrafterTrainer(Trainer):
    """The adaptation trainer with the drafter's step: seeded picks and block offsets."""

    def __init__(self, model: PeftModel, settings: Any, features: list[Feature],
                 noise_id: int, device: torch.device):  # fmt: skip
        super().__init__(model, settings, features, noise_id, device)
        self.noise_id = noise_id
        self.gate = PositionGate(model)

    def step(self, step: int) -> tuple[float, int]:
        """One optimizer step; the mean loss per noisy slot and how many slots there were."""
        settings = self.settings
        block = block_for(step, settings.steps, settings.blocks)
        generator = torch.Generator().manual_seed(settings.seed * 1_000_003 + step)
        picks = torch.randint(len(self.features), (settings.batch_size,), generator=generator)
        offsets = torch.randint(block, (settings.batch_size,), generator=generator)
        sequences = [
            build_sequence(self.features[int(i)], block, self.noise_id, int(o), self.device)
            for i, o in zip(picks, offsets, strict=True)
        ]
        chosen = [s for s in sequences if s is not None]
        total = sum(s.slots for s in chosen)
        self.model.train()
        loss_sum = 0.0
        for sequence in chosen:
            loss, _ = distill_loss(
                self.model, self.gate, sequence, settings.kl_weight, settings.tv_weight
            )
            (loss / total).backward()
            loss_sum += float(loss.detach()) / total
        self.update()
        return loss_sum, total

    @torch.no_grad()
    def evaluate(self, features: list[Feature]) -> float:
        """Mean total-variation distance per slot at the largest block (1 - TV: acceptance)."""
        self.model.eval()
        block = max(self.settings.blocks)
        tv, slots = 0.0, 0
        for feature in features:
            sequence = build_sequence(feature, block, self.noise_id, 0, self.device)
            if sequence is None:
                continue
            _, parts = distill_loss(self.model, self.gate, sequence, 0.0, 1.0)
            tv += parts["tv"]
            slots += sequence.slots
        return tv / max(slots, 1)


def run_drafter_training(settings: Any) -> dict[str, Any]:
    """Train (or resume) and write OUT/drafter; returns the run's summary figures."""
    _check_settings(settings)
    manifest = read_manifest(settings.data)
    model_name = settings.model or manifest.get("model")
    if not model_name:
        raise DatasetError(f"{settings.data}: the data names no model: pass --model")
    set_threads(settings.threads)
    device = resolve_device(settings.device)
    loaded = load_model(model_name, device, resolve_dtype(device, settings.dtype))
    tokenizer = loaded.tokenizer
    noise_id = _noise_id(settings, tokenizer)
    builder = PromptBuilder(tokenizer, manifest["prompt_format"], (), None)
    counts: Counter[str] = Counter()
    train = _features(settings, builder, TRAIN, counts)
    if not train:
        raise DatasetError(f"{settings.data}: no training row fits in {settings.max_length} tokens")
    validation = _features(settings, builder, VALIDATION, counts)[: settings.eval_rows]
    settings.out.mkdir(parents=True, exist_ok=True)
    run = _run_identity(settings, model_name, str(loaded.dtype), noise_id)
    model, state = model_to_train(settings, loaded, run)
    trainer = DrafterTrainer(model, settings, train, noise_id, device)
    drafter_manifest = _drafter_manifest(settings, manifest, model_name, noise_id, len(train))
    before = trainer.evaluate(validation) if validation and state is None else None
    summary = run_trainer(trainer, state, validation, run, drafter_manifest, DRAFTER)
    return {**summary, "validation_tv_before": before, "skipped": dict(counts),
            "model": model_name, "device": str(device),
            "dtype": str(loaded.dtype).removeprefix("torch."), "noise_id": noise_id}  # fmt: skip


def _features(settings: Any, builder: PromptBuilder, split: str,
              counts: Counter[str]) -> list[Feature]:  # fmt: skip
    """Sequences of one split: by default one per function, its complete docstring's row."""
    rows = read_rows(settings.data, split)
    if not settings.all_prefixes:
        rows = [row for row in rows if row.get("typed") == row.get("units")]
    return make_features(rows, builder, settings.max_length, counts)


def _noise_id(settings: Any, tokenizer: Any) -> int:
    chosen = settings.noise_token
    if chosen is None:
        chosen = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else None
        chosen = chosen if chosen is not None else tokenizer.eos_token_id
    if chosen is None or not 0 <= int(chosen) < len(tokenizer):
        raise ConfigError(f"noise token {chosen!r} is not in the vocabulary: pass --noise-token")
    return int(chosen)


def _check_settings(settings: Any) -> None:
    blocks = settings.blocks
    if not blocks or any(b < 2 for b in blocks):
        raise ConfigError(f"block sizes must be at least 2, got {list(blocks)}")
    kl, tv = settings.kl_weight, settings.tv_weight
    if kl < 0 or tv < 0 or kl + tv == 0:
        raise ConfigError("the KL and TV weights must be non-negative and not both zero")


def _run_identity(settings: Any, model_name: str, dtype: str, noise_id: int) -> dict[str, Any]:
    """The settings a resumed run must share with its checkpoint (not the step budget)."""
    data = hashlib.sha256((settings.data / MANIFEST).read_bytes()).hexdigest()[:24]
    keys = ("rank", "alpha", "dropout", "learning_rate", "batch_size", "max_length",
            "kl_weight", "tv_weight", "all_prefixes", "seed")  # fmt: skip
    chosen = {key: value for key, value in asdict(settings).items() if key in keys}
    return {**chosen, "model": model_name, "data": data, "dtype": dtype, "noise_id": noise_id,
            "blocks": list(settings.blocks), "target_modules": list(settings.target_modules),
            "kind": DRAFTER_KIND}  # fmt: skip


def _drafter_manifest(settings: Any, data: dict[str, Any], model_name: str, noise_id: int,
                      rows: int) -> dict[str, Any]:  # fmt: skip
    return {
        "kind": DRAFTER_KIND,
        "base_model": model_name,
        "prompt_format": data["prompt_format"],
        "noise_id": noise_id,
        "block": max(settings.blocks),
        "lora": {"rank": settings.rank, "alpha": settings.alpha, "dropout": settings.dropout,
                 "target_modules": list(settings.target_modules)},  # fmt: skip
        "training": {
            "learning_rate": settings.learning_rate,
            "batch_size": settings.batch_size,
            "blocks": list(settings.blocks),
            "kl_weight": settings.kl_weight,
            "tv_weight": settings.tv_weight,
            "data": str(settings.data),
            "rows": rows,
        },
    }
