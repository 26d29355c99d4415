"""Runtimes behind the seam (base.py): torch, llama.cpp and vLLM, and which one `auto` picks."""

from __future__ import annotations

import importlib.util
from typing import TYPE_CHECKING

from inference.errors import ConfigError
from inference.runtimes import model_files
from inference.runtimes.model_files import ModelFiles

if TYPE_CHECKING:
    from inference.config import EngineConfig
    from inference.runtimes.base import Runtime


def load_runtime(config: EngineConfig) -> Runtime:
    """Load the configured model in the runtime the settings ask for (or `auto` picks)."""
    files = model_files.resolve(config.model)
    kind = choose_runtime(config, files)
    if kind == "vllm":
        check_vllm_settings(config, files)
        from inference.runtimes.vllm_runtime import VllmRuntime

        return VllmRuntime(config, files)
    if kind == "llamacpp":
        check_llamacpp_settings(config, files)
        from inference.runtimes.llamacpp_runtime import LlamaCppRuntime

        return LlamaCppRuntime(config, files)
    from inference.runtimes.torch_runtime import TorchRuntime

    return TorchRuntime.load(config)


def choose_runtime(config: EngineConfig, files: ModelFiles) -> str:
    """`torch` or `llamacpp`: the setting, or for `auto` llama.cpp on a CPU with a GGUF at hand.

    `auto` never picks vLLM (a server is named on purpose). It keeps torch on CUDA, for
    settings only torch has (a parallel drafter, a dtype), and for models that have no GGUF
    (a Hugging Face folder or hub id).
    """
    if config.runtime != "auto":
        return config.runtime
    torch_only = config.drafter or config.dtype != "auto"
    if torch_only or files.gguf is None or config.device == "cuda":
        return "torch"
    if importlib.util.find_spec("llama_cpp") is None:
        return "torch"
    import torch

    return "torch" if config.device == "auto" and torch.cuda.is_available() else "llamacpp"


def check_llamacpp_settings(config: EngineConfig, files: ModelFiles) -> None:
    """Refuse settings the llama.cpp runtime cannot honour, naming the torch runtime."""
    if files.gguf is None:
        where = files.hub_id or files.folder
        raise ConfigError(
            f"the llama.cpp runtime runs GGUF files and {where} has none; "
            "name a .gguf file or a model pack, or set runtime to 'torch'"
        )
    if config.drafter:
        raise ConfigError(
            "the parallel drafter runs on the torch runtime only: set runtime 'torch'"
        )
    if config.dtype != "auto":
        raise ConfigError(
            f"dtype {config.dtype!r} is a torch setting: llama.cpp runs the GGUF's own weights "
            "(set dtype 'auto', or runtime 'torch')"
        )


def check_vllm_settings(config: EngineConfig, files: ModelFiles) -> None:
    """Refuse settings a vLLM server cannot honour from here; the tokenizer must be at hand."""
    for name in ("adapter", "drafter"):
        if getattr(config, name):
            raise ConfigError(
                f"{name} is loaded into the model in process: with runtime 'vllm' serve it "
                "from vLLM instead (or set runtime to 'torch')"
            )
    if config.dtype != "auto":
        raise ConfigError(f"dtype {config.dtype!r}: the vLLM server chooses it (--dtype)")
    if not config.vllm_url.startswith(("http://", "https://")):
        raise ConfigError(f"vllm_url {config.vllm_url!r} is not an http:// or https:// URL")
    if not (files.has_tokenizer_files or files.hub_id):
        where = files.hub_id or files.folder or files.gguf
        raise ConfigError(
            f"the vLLM runtime needs the served model's tokenizer here and {where} has none: "
            "name the pack or folder the server serves"
        )
