"""Training checkpoints: the adapter so far plus optimizer, schedule, step and RNG; resuming them.

OUT/checkpoints/step-00000100/ is a complete adapter folder (it loads like the final one)
with trainer.pt next to it. A checkpoint is written under a temporary name and renamed, so
the latest folder is always whole.
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path
from typing import Any

import torch
from peft import PeftModel

from inference.adapters.adapter import write_adapter
from inference.lab.adapt.errors import CheckpointError

CHECKPOINTS = "checkpoints"
STATE = "trainer.pt"
_STEP = re.compile(r"^step-(\d{8})$")


def checkpoints_of(out: Path) -> list[Path]:
    """Complete checkpoint folders under OUT, oldest first."""
    folder = out / CHECKPOINTS
    if not folder.is_dir():
        return []
    found = [p for p in folder.iterdir() if _STEP.match(p.name) and (p / STATE).is_file()]
    return sorted(found, key=lambda p: p.name)


def save_checkpoint(
    out: Path,
    step: int,
    peft_model: PeftModel,
    trainer_state: dict[str, Any],
    adapter_manifest: dict[str, Any],
    keep: int,
) -> Path:
    """Write checkpoint `step` and keep only the newest `keep` checkpoints."""
    final = out / CHECKPOINTS / f"step-{step:08d}"
    partial = final.with_name(f".{final.name}.partial")
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir(parents=True)
    write_adapter(peft_model, partial, {**adapter_manifest, "steps": step})
    torch.save({**trainer_state, "step": step, "rng": rng_state()}, partial / STATE)
    shutil.rmtree(final, ignore_errors=True)
    os.replace(partial, final)
    for old in checkpoints_of(out)[:-keep]:
        shutil.rmtree(old)
    return final


def load_checkpoint(folder: Path) -> dict[str, Any]:
    """trainer.pt of a checkpoint folder."""
    try:
        state = torch.load(folder / STATE, map_location="cpu", weights_only=True)
    except (OSError, RuntimeError, EOFError) as exc:
        raise CheckpointError(f"{folder}: cannot read {STATE}: {exc}") from exc
    if not isinstance(state, dict) or not isinstance(state.get("step"), int):
        raise CheckpointError(f"{folder}: {STATE} is not a prewrite training state")
    return state


def check_same_run(saved: dict[str, Any], current: dict[str, Any], folder: Path) -> None:
    """Refuse to resume a checkpoint written with other settings (the step budget may change)."""
    changed = [
        key for key in sorted(set(saved) | set(current)) if saved.get(key) != current.get(key)
    ]
    if changed:
        details = "; ".join(f"{k}: {saved.get(k)!r} -> {current.get(k)!r}" for k in changed)
        raise CheckpointError(f"{folder} was written with other settings ({details})")


def rng_state() -> dict[str, Any]:
    """The generators dropout draws from."""
    state: dict[str, Any] = {"torch": torch.get_rng_state()}
    if torch.cuda.is_available():
        state["cuda"] = torch.cuda.get_rng_state_all()
    return state


def restore_rng(state: dict[str, Any]) -> None:
    """Put the generators back where a checkpoint left them."""
    torch.set_rng_state(state["torch"])
    if "cuda" in state and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(state["cuda"])
