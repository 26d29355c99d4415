"""What `drafter train` is asked to do: settings and defaults, declared once."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from inference.lab.adapt.settings import RunSettings

# The seed's ablation: LoRA on every projection beats any subset (q-only is worst).
ALL_PROJECTIONS = ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj")


@dataclass(frozen=True, kw_only=True)
class DrafterSettings(RunSettings):
    """Everything `drafter train` is asked to do.

    The seed uses rank 128 / alpha 256 on an 8B model; rank 32 / alpha 64 keeps the same
    alpha = 2 r on the small models these CPUs can train. Loss weights are the seed's best
    ablation (TV with the KL weighted 0.01); block sizes grow 2 -> 4 -> 8 (its curriculum).
    """

    data: Path
    out: Path
    model: str | None = None  # default: the model the data was distilled from
    steps: int = 300
    rank: int = 32
    alpha: int = 64
    dropout: float = 0.0
    learning_rate: float = 1e-3
    batch_size: int = 8  # sequences per optimizer step (one forward each)
    max_length: int = 1024
    target_modules: tuple[str, ...] = ALL_PROJECTIONS
    blocks: tuple[int, ...] = (2, 4, 8)
    kl_weight: float = 0.01
    tv_weight: float = 1.0
    noise_token: int | None = None  # default: the pad token, else EOS
    all_prefixes: bool = False  # also train on the rows of incomplete docstrings
    checkpoint_every: int = 50
    eval_rows: int = 32
