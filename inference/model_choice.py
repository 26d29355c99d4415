"""`model: auto`: the better model where this machine answers at typing speed with it.

Measured with `prewrite bench-lsp` (docs/measurements/bench-lsp.md, 2026-12-07; the `steady`
typist at 6 cps, 1 s pause, ten held-out sessions, llama.cpp on 2 cores): qwen2.5-coder-1.5b's
median trigger-to-answer was 60 ms on an AMD EPYC with AVX-512 but 4851 ms on one with AVX2
only, where its forwards cost about three times as much and the drafts fall behind the typing.
So the 1.5B is chosen where llama.cpp has AVX-512 and at least two cores (or a CUDA GPU runs the
model) and its pack is installed; everywhere else the default pack. Nothing is downloaded here:
`prewrite models install qwen2.5-coder-1.5b` installs it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from inference.packs import AUTO_MODEL, DEFAULT_MODEL

LARGER_MODEL = "qwen2.5-coder-1.5b"
MIN_CORES = 2


@dataclass(frozen=True)
class Machine:
    """What the choice looks at: the CPU's flags, the cores this process may use, a CUDA GPU."""

    cpu_flags: frozenset[str]
    cores: int
    cuda: bool

    @classmethod
    def here(cls, device: str = "auto") -> Machine:
        """This machine (`device` as the engine's setting: 'cpu' rules the GPU out)."""
        from inference.runtimes.cpu_load import usable_cores

        return cls(_cpu_flags(), usable_cores(), device != "cpu" and _cuda())


@dataclass(frozen=True)
class Choice:
    """The pack `auto` stands for here, and why."""

    model: str
    why: str


def choose(machine: Machine, installed: Callable[[str], bool], runtime: str = "auto") -> Choice:
    """The pack for `model: auto` on `machine` and `runtime` (the setting); `installed(name)`
    says whether a pack is."""
    if runtime == "vllm":  # the model runs elsewhere: this machine says nothing of its speed
        return Choice(DEFAULT_MODEL, "the vLLM runtime")
    if machine.cuda:
        fits = "a CUDA GPU"
    elif runtime == "torch":  # measured on llama.cpp; torch on a CPU is slower
        return Choice(DEFAULT_MODEL, f"{LARGER_MODEL} is too slow on torch without a GPU")
    elif "avx512f" in machine.cpu_flags and machine.cores >= MIN_CORES:
        fits = f"AVX-512 and {machine.cores} cores"
    else:
        vector = "AVX-512" if "avx512f" in machine.cpu_flags else "no AVX-512"
        return Choice(DEFAULT_MODEL, f"{LARGER_MODEL} is too slow here ({vector}, "
                                     f"{machine.cores} cores)")  # fmt: skip
    if not installed(LARGER_MODEL):
        return Choice(DEFAULT_MODEL, f"{fits}, but {LARGER_MODEL} is not installed "
                                     f"(prewrite models install {LARGER_MODEL})")  # fmt: skip
    return Choice(LARGER_MODEL, fits)


def resolve(model: str, device: str = "auto", runtime: str = "auto") -> Choice:
    """`model` itself, or for `auto` the pack chosen on this machine (`device` and `runtime`
    as the engine's settings)."""
    if model != AUTO_MODEL:
        return Choice(model, "as set")
    from inference import packs

    machine = Machine.here(device)

    def installed(name: str) -> bool:  # on a GPU the torch runtime loads the pack's weights
        if not packs.is_installed(name):
            return False
        return not machine.cuda or packs.has_weights(packs.pack_dir(name))

    return choose(machine, installed, runtime)


def _cpu_flags(path: Path = Path("/proc/cpuinfo")) -> frozenset[str]:
    try:
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            key, _, value = line.partition(":")
            if key.strip() == "flags":
                return frozenset(value.split())
    except OSError:
        pass
    return frozenset()


def _cuda() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return bool(torch.cuda.is_available())
