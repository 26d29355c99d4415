"""Batch-invariant numerics for llama.cpp on a CPU: a verify pass gives one-token decoding's
logits bit for bit, so an exact stream is plain greedy token for token.

llama.cpp's CPU kernels pick their path by the batch's shape, and each path rounds its own
way: llamafile's sgemm, the repacked-weight gemm against its gemv, the tiled K-quant matmul
(eight rows and more), flash attention's tiled many-query and split-KV one-query kernels, and,
in a KV cache unified across sequences, where a sequence's cells land beside the others'. With
all of them out of the way (llama.cpp built without llamafile, `GGML_CPU_TILED_MM=0`, the
weights not repacked, flash attention off, a KV stream per sequence) the remaining kernels
compute each row alone, in the same order whatever else is in the batch. Measured here
(qwen2.5-coder-0.5b Q4_K_M and smollm2-135m Q4_1, AVX-512): logits after a 64-token verify, a
verify in chunks, a rewind and re-feed, a fork, and feeds interleaved with other sequences all
equal one-token decoding exactly (they differed by up to 0.6 before); docs/engine.md has the
cost.

`numerics` chooses: `invariant` (refused, saying why, where the build or the environment
cannot give it), `fast` (every fast kernel; exact holds up to near-ties), `auto` (invariant
where answers are to be exact and it can be had: the CPU, a build without llamafile).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from inference.config import Numerics
from inference.errors import ConfigError
from inference.runtimes.machine import llamacpp_features

TILED_VARIABLE = "GGML_CPU_TILED_MM"  # llama.cpp's tiled K-quant matmul: "0" turns it off
TILED_FORCE_VARIABLE = "GGML_CPU_TILED_MM_FORCE"  # "1": tiled at every batch size (also invariant)
BUILD_HINT = (
    "build llama-cpp-python with CMAKE_ARGS=-DGGML_LLAMAFILE=OFF (`make venv` does)"
)


@dataclass(frozen=True)
class NumericsChoice:
    """What the runtime runs: `invariant` or `fast`, and why where `fast` was not asked for."""

    kind: Literal["invariant", "fast"]
    reason: str = ""

    @property
    def invariant(self) -> bool:
        return self.kind == "invariant"


def invariance_blocker(system_info: str, environ: Mapping[str, str], offload: bool) -> str:
    """Why this process cannot run llama.cpp batch-invariant ('' when it can)."""
    if offload:
        return "the model runs on a GPU, whose kernels are not batch-invariant"
    if "LLAMAFILE" in llamacpp_features(system_info):
        return f"this llama.cpp was built with llamafile's sgemm; {BUILD_HINT}"
    tiled_off = environ.get(TILED_VARIABLE, "1").strip() == "0"
    tiled_forced = environ.get(TILED_FORCE_VARIABLE, "").strip() == "1"
    if not (tiled_off or tiled_forced):
        return f"{TILED_VARIABLE} is not 0: the tiled matmul rounds its own way from 8 rows on"
    return ""


def choose_numerics(
    requested: Numerics,
    system_info: str,
    environ: Mapping[str, str],
    offload: bool,
    acceptance: str = "exact",
) -> NumericsChoice:
    """The numerics to run, given what was asked for; ConfigError for an impossible `invariant`.

    `auto` takes the fast kernels where the acceptance rule is not exact: nothing is lost then.
    """
    if requested == "fast":
        return NumericsChoice("fast")
    if requested == "auto" and acceptance != "exact":
        return NumericsChoice("fast", f"acceptance {acceptance!r} is not exact")
    blocker = invariance_blocker(system_info, environ, offload)
    if not blocker:
        return NumericsChoice("invariant")
    if requested == "invariant":
        raise ConfigError(f"numerics 'invariant' is not available: {blocker}")
    return NumericsChoice("fast", blocker)
