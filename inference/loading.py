"""Where an engine is put together: the configured model in its runtime, its pack's defaults.

The engine itself knows neither packs nor how a runtime is chosen; callers that start from
settings (the server, the demo, the lab's tools) come through here.
"""

from __future__ import annotations

from inference.config import EngineConfig
from inference.engine import Engine
from inference.packs import PACKS
from inference.runtimes import load_runtime


def load_engine(config: EngineConfig) -> Engine:
    """Load the configured model in its runtime and build an engine around it."""
    pack = PACKS.get(config.model)
    return Engine(config, load_runtime(config), pack.prompt_format if pack else None)
