"""What `adapt build-data` and `adapt train` are asked to do: settings and defaults, declared once.

The command line takes its defaults from here, so they cannot drift from the functions'.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from inference.lab.adapt.filters import Bounds

TargetKind = Literal["self", "reference"]
# The seed follows Li and Grover (2025) without quoting the message; this is ours.
SYSTEM_MESSAGE = (
    "The request may be incomplete: it can stop in the middle of a sentence. "
    "Answer it as you would answer the complete request."
)
ATTENTION_PROJECTIONS = ("q_proj", "k_proj", "v_proj", "o_proj")


@dataclass(frozen=True, kw_only=True)
class RunSettings:
    """What every training run takes besides its recipe: where it runs, resuming, output."""

    keep_checkpoints: int = 3
    seed: int = 0
    resume: bool = False
    device: str = "auto"
    dtype: str = "auto"
    threads: int | None = None
    progress: bool = True


@dataclass(frozen=True)
class BuildSettings:
    """Everything `build-data` is asked to do."""

    out: Path
    sources: list[str] = field(default_factory=list)  # 'stdlib', 'packages' or folders
    exclude: list[str] = field(default_factory=list)  # JSONL suites beyond HumanEval
    target: TargetKind = "self"
    limit: int | None = None
    validation_fraction: float = 0.05
    engine: dict[str, Any] = field(default_factory=dict)  # the teacher's engine settings
    bounds: Bounds = Bounds()
    progress: bool = True


@dataclass(frozen=True, kw_only=True)
class TrainSettings(RunSettings):
    """Everything `adapt train` is asked to do."""

    data: Path
    out: Path
    model: str | None = None  # default: the model the data was distilled from
    steps: int = 1000
    rank: int = 8
    alpha: int = 16
    dropout: float = 0.05
    learning_rate: float = 2e-5
    batch_size: int = 16  # effective: micro_batch x gradient accumulation
    micro_batch: int = 4
    max_length: int = 2048
    target_modules: tuple[str, ...] = ATTENTION_PROJECTIONS
    system_prompt: str | None = None
    checkpoint_every: int = 100
    eval_rows: int = 64
