"""The streaming algorithm: sessions, verify / accept / regenerate, stop rules, prompt formats."""

from inference.engine.engine import BASELINE, DRAFTING, RESIDUAL, WARMUP, Engine

__all__ = ["BASELINE", "DRAFTING", "RESIDUAL", "WARMUP", "Engine"]
