"""Where an engine is put together: the configured model in its runtime, its pack's defaults.

The engine itself knows neither packs nor how a runtime is chosen; callers that start from
settings (the server, the demo, the lab's tools) come through here.
"""

from __future__ import annotations

from inference.config import EngineConfig
from inference.engine import Engine
from inference.model_choice import resolve
from inference.packs import PACKS
from inference.runtimes import load_runtime


def resolve_model(config: EngineConfig) -> tuple[EngineConfig, str]:
    """The config with `model: auto` replaced by the pack chosen on this machine, and why."""
    choice = resolve(config.model, config.device, config.runtime)
    if choice.model == config.model:
        return config, choice.why
    return config.model_copy(update={"model": choice.model}), f"auto: {choice.why}"


def load_engine(config: EngineConfig) -> Engine:
    """Load the configured model (`auto`: resolved here) in its runtime, in an engine."""
    config, _ = resolve_model(config)
    pack = PACKS.get(config.model)
    return Engine(config, load_runtime(config), pack.prompt_format if pack else None)
