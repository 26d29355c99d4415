"""The drafter as the engine uses it: a gated LoRA folder loaded onto the model, gate closed.

A drafter folder is an adapter folder (peft's files plus prewrite-adapter.json) whose manifest
says `"kind": "drafter"` and records the noise token and the block size it was trained for.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import torch

from inference.adapters.adapter import adapter_folder, apply_adapter, read_manifest
from inference.adapters.errors import AdapterFolderError
from inference.adapters.gate import PositionGate

DRAFTER_KIND = "drafter"
DrafterMode = Literal["fused", "seed"]


@dataclass
class Drafter:
    """How to draft a block in the forward that verifies the previous one.

    `block` is B: one AR token plus B-1 tokens guessed at noisy positions. In `fused` mode
    every forward carries a noisy tail (verify block t and draft block t+1 together, one
    forward per step); in `seed` mode a tail rides only on forwards that verify nothing,
    the seed's two forwards per step.
    """

    gate: PositionGate
    noise_id: int
    block: int
    mode: DrafterMode = "fused"

    @property
    def noise(self) -> int:
        """Noisy positions appended to a drafting forward."""
        return self.block - 1

    def tail_for(self, proposals: int) -> int:
        """Noisy positions to append to a forward that verifies `proposals` tokens."""
        if self.mode == "fused" or proposals == 0:
            return self.noise
        return 0


def load_drafter(
    model: torch.nn.Module,
    name: str,
    model_name: str,
    *,
    block: int | None = None,
    mode: DrafterMode = "fused",
) -> tuple[torch.nn.Module, Drafter]:
    """Put the drafter in folder `name` on `model` (unmerged, gate closed)."""
    folder = adapter_folder(name)
    manifest = read_manifest(folder)
    if manifest is None or manifest.get("kind") != DRAFTER_KIND:
        raise AdapterFolderError(
            f"{folder} is not a drafter (train one with `prewrite drafter train`); "
            "a LoRA from `prewrite adapt train` is passed as --adapter"
        )
    peft_model = apply_adapter(model, name, model_name, merge=False)
    drafter = Drafter(
        PositionGate(peft_model),  # type: ignore[arg-type]
        int(manifest["noise_id"]),
        int(block or manifest["block"]),
        mode,
    )
    return peft_model, drafter
