"""An adapter folder: peft's LoRA files plus prewrite-adapter.json; checked, loaded and merged.

The manifest records the base model's identity (`identity.py`) and the prompt settings the
adapter was trained with, so applying it to another model is a clear error rather than a
silently wrong model. Adapters written elsewhere (no manifest) load too, checked by peft's
shapes and by every saved tensor finding its place.
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import torch
from peft import PeftModel
from peft.utils import get_peft_model_state_dict, load_peft_weights

from inference.adapters.errors import AdapterFolderError, AdapterMismatchError
from inference.adapters.identity import identity_problem, model_identity

MANIFEST = "prewrite-adapter.json"
FORMAT = "prewrite-adapter/1"
PEFT_CONFIG = "adapter_config.json"


def write_adapter(peft_model: PeftModel, folder: Path, manifest: dict[str, Any]) -> Path:
    """Save the LoRA weights with peft and the manifest next to them."""
    peft_model.save_pretrained(str(folder))
    base = peft_model.get_base_model()
    record = {"format": FORMAT, **manifest, "base": model_identity(base)}
    (folder / MANIFEST).write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    return folder


def adapter_folder(name: str) -> Path:
    """The adapter's folder, checked for peft's config file."""
    folder = Path(name).expanduser()
    if not folder.is_dir():
        raise AdapterFolderError(f"adapter folder {folder} does not exist or is not a folder")
    if not (folder / PEFT_CONFIG).is_file():
        raise AdapterFolderError(
            f"adapter folder {folder} has no {PEFT_CONFIG}: not an adapter written by "
            "`prewrite adapt train` or peft's save_pretrained"
        )
    return folder


def read_manifest(folder: Path) -> dict[str, Any] | None:
    """prewrite-adapter.json, or None for an adapter written by other tools."""
    path = folder / MANIFEST
    if not path.is_file():
        return None
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise AdapterFolderError(f"{path}: unreadable adapter manifest: {exc}") from exc
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise AdapterFolderError(f"{path}: not a prewrite adapter manifest ({FORMAT})")
    return manifest


def with_adapter_settings(values: dict[str, Any]) -> dict[str, Any]:
    """Engine settings with the adapter's prompt format and system prompt filled in.

    An adapter learns one prompt shape; a prompt format left at 'auto' and a system prompt
    left unset take the ones it was trained with (settings given explicitly win).
    """
    if not values.get("adapter"):
        return values
    manifest = read_manifest(adapter_folder(values["adapter"])) or {}
    filled = dict(values)
    if filled.get("prompt_format", "auto") == "auto" and manifest.get("prompt_format"):
        filled["prompt_format"] = manifest["prompt_format"]
    if filled.get("system_prompt") is None and manifest.get("system_prompt"):
        filled["system_prompt"] = manifest["system_prompt"]
    return filled


def check_adapter(
    name: str, model_name: str, identity: Callable[[], dict[str, Any]], merged: bool = True
) -> Path:
    """The adapter's folder, once its manifest says it was trained on this model.

    `identity` computes the model's (`identity.py`); adapters without a manifest pass.
    """
    folder = adapter_folder(name)
    manifest = read_manifest(folder)
    if merged and manifest is not None and manifest.get("kind") == "drafter":
        raise AdapterFolderError(
            f"{folder} is a drafter: it is loaded with --drafter, never merged into the weights"
        )
    if manifest is not None:
        problem = identity_problem(manifest.get("base", {}), identity())
        if problem is not None:
            raise AdapterMismatchError(
                f"adapter {folder} was trained on {manifest.get('base_model', 'another model')}, "
                f"not on {model_name}: {problem}"
            )
    return folder


def apply_adapter(
    model: torch.nn.Module, name: str, model_name: str, merge: bool = True
) -> torch.nn.Module:
    """`model` with the adapter applied: merged into its weights, or as a peft wrapper."""
    folder = check_adapter(name, model_name, lambda: model_identity(model), merged=merge)
    try:
        with quiet_peft():
            peft_model = PeftModel.from_pretrained(model, str(folder), is_trainable=False)
    except (RuntimeError, ValueError, KeyError) as exc:  # size mismatch, no target modules
        detail = " ".join(line.strip() for line in str(exc).splitlines()[:2])[:300]
        raise AdapterMismatchError(f"adapter {folder} does not fit {model_name}: {detail}") from exc
    _check_every_tensor_placed(peft_model, folder, model_name)
    return peft_model.merge_and_unload() if merge else peft_model


@contextmanager
def quiet_peft() -> Iterator[None]:
    """peft 0.21 calls an API transformers 5 deprecated; the warning is not the user's to act on."""
    with warnings.catch_warnings():
        warnings.filterwarnings(
            "ignore", message=".*is_gradient_checkpointing", category=FutureWarning
        )
        yield


def _check_every_tensor_placed(peft_model: PeftModel, folder: Path, model_name: str) -> None:
    """peft skips saved tensors that find no module; an adapter for a deeper model would."""
    saved = set(load_peft_weights(str(folder), device="cpu"))
    placed = set(get_peft_model_state_dict(peft_model))
    if saved != placed:
        extra = sorted(saved - placed)[:2]
        raise AdapterMismatchError(
            f"adapter {folder} does not fit {model_name}: {len(saved - placed)} saved tensors "
            f"have no place in it (e.g. {', '.join(extra) or 'none'}), "
            f"{len(placed - saved)} of its adapter tensors are missing"
        )
