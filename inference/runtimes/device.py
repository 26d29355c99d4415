"""Device and dtype choice, in one place so CUDA runs exactly the code path the CPU tests cover."""

from __future__ import annotations

import torch

from inference.errors import ConfigError


def resolve_device(preference: str) -> torch.device:
    """'auto' picks CUDA when present, else the CPU; 'cuda' without a GPU is an error."""
    if preference == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if preference == "cuda" and not torch.cuda.is_available():
        raise ConfigError("device 'cuda' was asked for but no CUDA device is available")
    return torch.device(preference)


def resolve_dtype(device: torch.device, preference: str) -> torch.dtype:
    """'auto' is bfloat16 on CUDA and float32 on the CPU (exact mode's reference precision)."""
    if preference == "auto":
        return torch.bfloat16 if device.type == "cuda" else torch.float32
    return getattr(torch, preference)


def set_threads(threads: int | None) -> None:
    """Pin the CPU thread count when the user asked for one."""
    if threads is not None:
        torch.set_num_threads(threads)
