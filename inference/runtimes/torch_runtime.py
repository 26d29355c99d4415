"""Turning a model name (pack, local folder or hub id) into a loaded model and tokenizer."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import torch
from transformers import AutoModelForCausalLM, AutoTokenizer, PreTrainedTokenizerBase

from inference import packs
from inference.errors import ModelFolderError, ModelNotFoundError

if TYPE_CHECKING:
    from inference.drafter.drafter import Drafter, DrafterMode

_WEIGHT_PATTERNS = ("*.safetensors", "*.bin", "*.safetensors.index.json", "*.bin.index.json")
_TOKENIZER_FILES = ("tokenizer.json", "tokenizer.model", "vocab.json", "tokenizer_config.json")


@dataclass
class LoadedModel:
    """A causal LM ready for inference, with what the engine needs to know about it."""

    name: str
    model: torch.nn.Module
    tokenizer: PreTrainedTokenizerBase
    device: torch.device
    dtype: torch.dtype
    drafter: Drafter | None = None

    @property
    def context_length(self) -> int:
        """The longest sequence (prompt + answer) the model accepts."""
        config = self.model.config
        return int(getattr(config, "max_position_embeddings", None) or 2048)


def resolve_model_path(name: str) -> str:
    """A pack name becomes its installed folder; a folder is checked; anything else is a hub id."""
    if name in packs.PACKS:
        return str(packs.installed_path(name))
    path = Path(name).expanduser()
    if path.exists() or name.startswith((".", "/", "~")):
        check_model_folder(path)
        return str(path)
    if name.count("/") == 1 and not os.environ.get("HF_HUB_OFFLINE"):
        return name  # a hub id, for users who are online
    known = ", ".join(packs.PACKS)
    raise ModelNotFoundError(
        f"model {name!r} is neither a model pack ({known}), a local folder, nor a hub id"
    )


def check_model_folder(path: Path) -> None:
    """Raise ModelFolderError naming what a Hugging Face model folder lacks."""
    if not path.is_dir():
        raise ModelFolderError(f"model folder {path} does not exist or is not a folder")
    missing = []
    if not (path / "config.json").is_file():
        missing.append("config.json")
    if not any(any(path.glob(pattern)) for pattern in _WEIGHT_PATTERNS):
        missing.append("weights (*.safetensors or *.bin)")
    if not any((path / f).is_file() for f in _TOKENIZER_FILES):
        missing.append("tokenizer files (tokenizer.json or tokenizer_config.json)")
    if missing:
        raise ModelFolderError(f"model folder {path} is missing: {', '.join(missing)}")


def load_model(
    name: str,
    device: torch.device,
    dtype: torch.dtype,
    *,
    trust_remote_code: bool = False,
    adapter: str | None = None,
    drafter: str | None = None,
    drafter_block: int | None = None,
    drafter_mode: DrafterMode = "fused",
) -> LoadedModel:
    """Load `name` onto `device` in `dtype`, in eval mode, with `adapter` merged in if given.

    A `drafter` is put on top, unmerged, with its gate closed: the model's forwards stay
    exactly the base model's unless the engine opens the gate at noisy positions.
    """
    source = resolve_model_path(name)
    try:
        tokenizer = AutoTokenizer.from_pretrained(source, trust_remote_code=trust_remote_code)
        model: torch.nn.Module = AutoModelForCausalLM.from_pretrained(
            source, dtype=dtype, trust_remote_code=trust_remote_code
        )
    except (OSError, ValueError, KeyError) as exc:
        raise ModelFolderError(f"could not load model {name!r} from {source}: {exc}") from exc
    if adapter is not None:
        from inference.adapt.adapter import apply_adapter  # peft costs a second and a half

        model = apply_adapter(model, adapter, name)
    parallel = None
    if drafter is not None:
        from inference.drafter.drafter import load_drafter

        model, parallel = load_drafter(model, drafter, name, block=drafter_block, mode=drafter_mode)
    model = model.to(device).eval()  # type: ignore[arg-type]
    return LoadedModel(name, model, tokenizer, device, dtype, parallel)
