"""Per-position gating of a peft LoRA: clean positions run the AR weights, noisy ones AR + LoRA.

peft applies an adapter to every position of a batch (or per sequence with `adapter_names`),
never per position. What it lacks is added here and nothing else: a forward hook scales each
LoRA branch's output by a 0/1 mask over positions. With the gate closed the LoRA layers are
switched off through peft, so the model runs exactly its base weights (bit-identical logits).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import torch
from peft import PeftModel
from peft.tuners.lora import LoraLayer


class PositionGate:
    """Opens a PeftModel's LoRA at chosen positions of one forward; closed otherwise."""

    def __init__(self, model: PeftModel):
        self.model = model
        self.layers = [m for m in model.modules() if isinstance(m, LoraLayer)]
        if not self.layers:
            raise ValueError("the model has no LoRA layers to gate")
        self._mask: torch.Tensor | None = None  # [B, S, 1] in the activations' dtype
        for layer in self.layers:
            for branch in layer.lora_B.values():
                branch.register_forward_hook(self._scale)
        self._switch(False)

    @contextmanager
    def open_at(self, mask: torch.Tensor) -> Iterator[None]:
        """Within the block, LoRA applies where `mask` [B, S] is true (all of one forward)."""
        if not bool(mask.any()):
            yield  # nothing noisy: the closed gate is the exact base model
            return
        self._mask = mask[..., None]
        self._switch(True)
        try:
            yield
        finally:
            self._switch(False)
            self._mask = None

    def _switch(self, on: bool) -> None:
        # peft's enable_adapters() also flips requires_grad, which must not change between a
        # training forward and its backward; the flag alone is what its forward reads
        for layer in self.layers:
            layer._disable_adapters = not on

    def _scale(self, module: torch.nn.Module, inputs: tuple, output: torch.Tensor) -> torch.Tensor:
        mask = self._mask
        if mask is None:
            return output
        return output * mask.to(output.dtype)
