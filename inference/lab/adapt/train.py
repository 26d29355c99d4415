"""`prewrite adapt train`: LoRA on the attention projections, loss on answer tokens, resumable.

Defaults are the seed's (section 7): rank 8, alpha 16, dropout 0.05, learning rate 2e-5
(constant), effective batch 16, sequences up to 2048 tokens. An effective batch is
`batch_size / micro_batch` forwards whose gradients add up; its loss is the mean over all of
its answer tokens, exactly as one big batch would give.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections import Counter
from dataclasses import asdict
from pathlib import Path
from typing import Any

import torch
from peft import LoraConfig, PeftModel, get_peft_model
from tqdm import tqdm

from inference.adapters.adapter import quiet_peft, write_adapter
from inference.adapters.identity import tokenizer_signature
from inference.engine.prompting import PromptBuilder
from inference.errors import ConfigError
from inference.lab.adapt.batches import Feature, answer_loss, collate, make_features
from inference.lab.adapt.checkpoints import (
    check_same_run,
    checkpoints_of,
    load_checkpoint,
    restore_rng,
    save_checkpoint,
)
from inference.lab.adapt.dataset import MANIFEST, TRAIN, VALIDATION, read_manifest, read_rows
from inference.lab.adapt.errors import CheckpointError, DatasetError
from inference.lab.adapt.settings import TrainSettings
from inference.runtimes.device import resolve_device, resolve_dtype, set_threads
from inference.runtimes.torch_runtime import LoadedModel, load_model

ADAPTER, LOG = "adapter", "train-log.jsonl"


class Trainer:
    """One LoRA model, its optimizer, and the deterministic order it reads the data in."""

    def __init__(self, model: PeftModel, settings: Any, features: list[Feature],
                 pad_id: int, device: torch.device):  # fmt: skip
        self.model = model
        self.settings = settings
        self.features = features
        self.pad_id = pad_id
        self.device = device
        self.params = [p for p in model.parameters() if p.requires_grad]
        self.optimizer = torch.optim.AdamW(self.params, lr=settings.learning_rate, weight_decay=0.0)
        self._orders: dict[int, list[int]] = {}

    def batch(self, step: int) -> list[Feature]:
        """The features of one effective batch: a fresh seeded permutation every epoch."""
        size, n = self.settings.batch_size, len(self.features)
        positions = range(step * size, (step + 1) * size)
        return [self.features[self._order(p // n)[p % n]] for p in positions]

    def step(self, step: int) -> tuple[float, int]:
        """One optimizer step; the mean loss per answer token and how many tokens there were."""
        features = self.batch(step)
        total = sum(f.answer_tokens for f in features)
        micro = self.settings.micro_batch
        self.model.train()
        loss_sum = 0.0
        for start in range(0, len(features), micro):
            batch = collate(features[start : start + micro], self.pad_id, self.device)
            loss = answer_loss(self.model, batch) / total
            loss.backward()
            loss_sum += float(loss.detach())
        self.update()
        return loss_sum, total

    def update(self) -> None:
        """Apply the accumulated gradients (clipped to norm 1) and clear them."""
        torch.nn.utils.clip_grad_norm_(self.params, 1.0)
        self.optimizer.step()
        self.optimizer.zero_grad(set_to_none=True)

    @torch.no_grad()
    def evaluate(self, features: list[Feature]) -> float:
        """Mean loss per answer token over `features` (dropout off)."""
        self.model.eval()
        total = sum(f.answer_tokens for f in features)
        micro = self.settings.micro_batch
        loss = sum(
            float(
                answer_loss(self.model, collate(features[i : i + micro], self.pad_id, self.device))
            )
            for i in range(0, len(features), micro)
        )
        return loss / max(total, 1)

    def _order(self, epoch: int) -> list[int]:
        if epoch not in self._orders:
            generator = torch.Generator().manual_seed(self.settings.seed * 1_000_003 + epoch)
            self._orders[epoch] = torch.randperm(len(self.features), generator=generator).tolist()
        return self._orders[epoch]


def run_training(settings: TrainSettings) -> dict[str, Any]:
    """Train (or resume) and write OUT/adapter; returns the run's summary figures."""
    manifest = read_manifest(settings.data)
    _check_settings(settings, manifest)
    model_name = settings.model or manifest.get("model")
    if not model_name:
        raise DatasetError(
            f"{settings.data}: the data names no model (reference targets): pass --model"
        )
    set_threads(settings.threads)
    device = resolve_device(settings.device)
    loaded = load_model(model_name, device, resolve_dtype(device, settings.dtype))
    _check_tokenizer(manifest, loaded, settings.data)
    builder = PromptBuilder(loaded.tokenizer, manifest["prompt_format"], (), settings.system_prompt)
    counts: Counter[str] = Counter()
    train, validation = _features(settings, builder, counts)
    settings.out.mkdir(parents=True, exist_ok=True)
    run = _run_identity(settings, model_name, loaded)
    model, state = model_to_train(settings, loaded, run)
    pad = loaded.tokenizer.pad_token_id
    pad_id = int(pad if pad is not None else loaded.tokenizer.eos_token_id or 0)
    trainer = Trainer(model, settings, train, pad_id, device)
    adapter_manifest = _adapter_manifest(settings, manifest, model_name, len(train))
    summary = run_trainer(trainer, state, validation, run, adapter_manifest, ADAPTER)
    return {**summary, "skipped": dict(counts), "model": model_name, "device": str(device),
            "dtype": str(loaded.dtype).removeprefix("torch.")}  # fmt: skip


def run_trainer(trainer: Any, state: dict[str, Any] | None, validation: list[Feature],
                run: dict[str, Any], manifest: dict[str, Any],
                name: str) -> dict[str, Any]:  # fmt: skip
    """Restore a checkpoint's state, train to the step budget, write OUT/name when finished."""
    if state is not None:
        trainer.optimizer.load_state_dict(state["optimizer"])
        restore_rng(state["rng"])
    summary = train_loop(trainer, validation, state["step"] if state else 0, run, manifest)
    settings = trainer.settings
    if not summary["interrupted"]:
        write_adapter(trainer.model, settings.out / name, {**manifest, "steps": settings.steps})
    return {**summary, "rows": len(trainer.features), "validation_rows": len(validation)}


def _features(
    settings: TrainSettings, builder: PromptBuilder, counts: Counter[str]
) -> tuple[list[Feature], list[Feature]]:
    """Training and validation sequences as the engine would prompt them."""
    rows = read_rows(settings.data, TRAIN)
    if not rows:
        raise DatasetError(f"{settings.data}: train.jsonl has no rows")
    train = make_features(rows, builder, settings.max_length, counts)
    held_out = read_rows(settings.data, VALIDATION)[: settings.eval_rows]
    validation = make_features(held_out, builder, settings.max_length, counts)
    if not train:
        raise DatasetError(f"{settings.data}: no training row fits in {settings.max_length} tokens")
    return train, validation


def train_loop(trainer: Any, validation: list[Feature], start: int, run: dict[str, Any],
               adapter_manifest: dict[str, Any]) -> dict[str, Any]:  # fmt: skip
    """Steps start..steps with logging and checkpoints; Ctrl-C checkpoints what was done.

    `trainer` is this module's Trainer or one like it (the drafter's): `step(i)` returns the
    step's loss and the positions it covered, `evaluate(features)` a validation loss.
    """
    settings = trainer.settings
    log = (settings.out / LOG).open("a", encoding="utf-8")
    bar = tqdm(total=settings.steps, initial=start, desc="train", unit="step",
               disable=not settings.progress, dynamic_ncols=True)  # fmt: skip
    seconds: list[float] = []
    done, interrupted, validation_loss = start, False, None
    try:
        for step in range(start, settings.steps):
            began = time.perf_counter()
            loss, tokens = trainer.step(step)
            seconds.append(time.perf_counter() - began)
            done = step + 1
            _log(log, step=done, loss=loss, answer_tokens=tokens, seconds=seconds[-1])
            bar.update(1)
            bar.set_postfix_str(f"loss {loss:.4f}", refresh=False)
            if done % settings.checkpoint_every == 0 or done == settings.steps:
                validation_loss = trainer.evaluate(validation) if validation else None
                _log(log, step=done, validation_loss=validation_loss)
                _checkpoint(trainer, done, run, adapter_manifest)
    except KeyboardInterrupt:
        interrupted = True
        if done > start:
            _checkpoint(trainer, done, run, adapter_manifest)
    finally:
        bar.close()
        log.close()
    mean = sum(seconds) / len(seconds) if seconds else 0.0
    return {"steps": done, "interrupted": interrupted, "seconds_per_step": mean,
            "validation_loss": validation_loss}  # fmt: skip


def _checkpoint(trainer: Any, step: int, run: dict[str, Any], manifest: dict[str, Any]) -> None:
    state = {"optimizer": trainer.optimizer.state_dict(), "run": run}
    save_checkpoint(trainer.settings.out, step, trainer.model, state, manifest,
                    trainer.settings.keep_checkpoints)  # fmt: skip


def model_to_train(
    settings: Any, loaded: LoadedModel, run: dict[str, Any]
) -> tuple[PeftModel, dict[str, Any] | None]:
    """A fresh LoRA model, or the last checkpoint's with its trainer state.

    `settings` has TrainSettings' out, resume, seed, rank, alpha, dropout, target_modules.
    """
    existing = checkpoints_of(settings.out)
    if existing and not settings.resume:
        raise CheckpointError(
            f"{settings.out} already holds checkpoints (latest {existing[-1].name}): pass "
            "--resume to continue, or choose another --out"
        )
    if existing:
        state = load_checkpoint(existing[-1])
        check_same_run(state.get("run", {}), run, existing[-1])
        with quiet_peft():
            model = PeftModel.from_pretrained(loaded.model, str(existing[-1]), is_trainable=True)
        return model, state
    torch.manual_seed(settings.seed)  # LoRA A matrices start random
    config = LoraConfig(
        r=settings.rank,
        lora_alpha=settings.alpha,
        lora_dropout=settings.dropout,
        target_modules=list(settings.target_modules),
        task_type="CAUSAL_LM",
    )
    try:
        with quiet_peft():
            return get_peft_model(loaded.model, config), None  # type: ignore[return-value]
    except ValueError as exc:  # no module of that name in this architecture
        raise ConfigError(f"cannot put LoRA on {loaded.name}: {exc}") from exc


def _run_identity(settings: TrainSettings, model_name: str, loaded: LoadedModel) -> dict[str, Any]:
    """The settings a resumed run must share with the checkpoint (not the step budget)."""
    data = hashlib.sha256((settings.data / MANIFEST).read_bytes()).hexdigest()[:24]
    keys = ("rank", "alpha", "dropout", "learning_rate", "batch_size", "max_length",
            "system_prompt", "seed")  # fmt: skip
    chosen = {key: value for key, value in asdict(settings).items() if key in keys}
    return {**chosen, "model": model_name, "data": data, "dtype": str(loaded.dtype),
            "target_modules": list(settings.target_modules)}  # fmt: skip


def _adapter_manifest(settings: TrainSettings, data: dict[str, Any], model_name: str,
                      rows: int) -> dict[str, Any]:  # fmt: skip
    return {
        "base_model": model_name,
        "prompt_format": data["prompt_format"],
        "system_prompt": settings.system_prompt,
        "lora": {
            "rank": settings.rank,
            "alpha": settings.alpha,
            "dropout": settings.dropout,
            "target_modules": list(settings.target_modules),
        },  # fmt: skip
        "training": {
            "learning_rate": settings.learning_rate,
            "batch_size": settings.batch_size,
            "max_length": settings.max_length,
            "data": str(settings.data),
            "target": data.get("target"),
            "rows": rows,
        },  # fmt: skip
    }


def _check_settings(settings: TrainSettings, manifest: dict[str, Any]) -> None:
    if settings.system_prompt and manifest.get("prompt_format") != "chat":
        raise ConfigError(
            f"a system message needs chat prompts; {settings.data} was built in the "
            f"{manifest.get('prompt_format')!r} format (build-data --prompt-format chat)"
        )
    if settings.batch_size % settings.micro_batch:
        raise ConfigError(
            f"batch size {settings.batch_size} is not a multiple of "
            f"micro-batch {settings.micro_batch}"
        )


def _check_tokenizer(manifest: dict[str, Any], loaded: LoadedModel, data: Path) -> None:
    """Answer token ids from one tokenizer mean nothing under another."""
    expected = manifest.get("tokenizer")
    if expected and expected != tokenizer_signature(loaded.tokenizer):
        raise DatasetError(
            f"{data} holds answer tokens of {manifest.get('model')}'s tokenizer; "
            f"{loaded.name} has another vocabulary: rebuild the data with --model {loaded.name}"
        )


def _log(handle: Any, **fields: Any) -> None:
    handle.write(json.dumps(fields) + "\n")
    handle.flush()
