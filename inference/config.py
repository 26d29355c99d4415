"""Engine settings: one pydantic schema with defaults, validated once where it enters."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from inference.errors import ConfigError
from inference.packs import AUTO_MODEL

Acceptance = Literal["exact", "threshold", "sample"]
PromptFormat = Literal["auto", "raw", "fim", "chat"]
RuntimeName = Literal["auto", "torch", "llamacpp", "vllm"]
Numerics = Literal["auto", "invariant", "fast"]  # llama.cpp's kernels (llamacpp_numerics.py)

# The seed does not publish its tau; 0.3 keeps a token the model still finds plausible while
# rejecting tokens it has clearly moved away from (see docs/engine.md).
DEFAULT_THRESHOLD = 0.3
# A line a person wrote stays in a body re-verified against a changed spec while the model gives
# each of its tokens at least this share of what the spec before the change gave it ...
RESPEC_RATIO = 0.25
# ... or, where that spec is not known, this probability (docs/engine.md, "Re-verifying a body").
RESPEC_THRESHOLD = 0.01


class EngineConfig(BaseModel):
    """Everything that decides how the engine loads its model and decodes."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    model: str = AUTO_MODEL  # model_choice.py: the 1.5B where it keeps up, else the default
    runtime: RuntimeName = "auto"  # torch on CUDA or for torch-only settings, else llama.cpp
    vllm_url: str = "http://127.0.0.1:8000"  # runtime vllm: the server (key: PREWRITE_VLLM_API_KEY)
    vllm_model: str | None = None  # the served model's name (None: the only one it serves)
    vllm_timeout_s: float = Field(default=30.0, gt=0.0, le=3600.0)
    adapter: str | None = None  # a LoRA adapter folder (prewrite adapt train), merged at load
    drafter: str | None = None  # a parallel drafter folder (prewrite drafter train)
    drafter_mode: Literal["fused", "seed"] = "fused"
    drafter_block: int | None = Field(default=None, ge=2, le=64)  # default: as trained
    device: Literal["auto", "cpu", "cuda"] = "auto"
    dtype: Literal["auto", "float32", "bfloat16", "float16", "float64"] = "auto"
    threads: int | None = Field(default=None, ge=1, le=512)
    # llama.cpp: KV cells, split between the `sequences` (invariant numerics) or shared by them
    context_size: int = Field(default=32768, ge=256, le=1 << 20)
    batch_size: int = Field(default=512, ge=8, le=16384)  # llama.cpp: most tokens per decode
    sequences: int = Field(default=8, ge=1, le=256)  # llama.cpp: cached sessions at once
    numerics: Numerics = "auto"  # llama.cpp: batch-invariant kernels (llamacpp_numerics.py)
    memory_budget_mb: int | None = Field(default=None, ge=1)  # sessions' caches; None: RAM/4
    trust_remote_code: bool = False
    acceptance: Acceptance = "exact"
    threshold: float = Field(default=DEFAULT_THRESHOLD, gt=0.0, le=1.0)
    temperature: float = Field(default=0.8, gt=0.0, le=5.0)
    seed: int = 0
    max_tokens: int = Field(default=256, ge=1, le=8192)
    respec_threshold: float = Field(default=RESPEC_THRESHOLD, gt=0.0, le=1.0)
    respec_ratio: float = Field(default=RESPEC_RATIO, gt=0.0, le=1.0)
    stop_strings: tuple[str, ...] = ()
    prompt_format: PromptFormat = "auto"  # auto: the pack's format (packs.py), else FIM or raw
    # the code after the function in FIM and chat prompts; auto: not on a CPU, where each edit
    # of the spec would encode it again (it follows the spec in the prompt)
    code_below: Literal["auto", "always", "never"] = "auto"
    system_prompt: str | None = None
    lookahead: int | None = Field(default=None, ge=0, le=64)  # None: the runtime's hint
    verify_chunk: int | None = Field(default=None, ge=0, le=4096)  # None: the runtime's hint
    prefill_chunk: int | None = Field(default=None, ge=0, le=65536)  # None: the runtime's hint


def validate_engine_config(values: dict) -> EngineConfig:
    """Build an EngineConfig from plain values, turning validation errors into ConfigError."""
    try:
        return EngineConfig(**values)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in err['loc']) or 'config'}: {err['msg']}"
            for err in exc.errors()
        )
        raise ConfigError(f"invalid engine settings: {problems}") from exc
