"""The engine demo: a docstring typed sentence by sentence, then the residual cost at trigger."""

from __future__ import annotations

from inference.api import Request
from inference.config import validate_engine_config
from inference.loading import load_engine

DEMO_FILE_HEAD = '''import re
from collections import Counter


def tokenize(text: str) -> list[str]:
    """Split text into lowercase words."""
    return re.findall(r"[a-z']+", text.lower())


def top_words(text: str, k: int) -> list[tuple[str, int]]:
    """'''

DEMO_UNITS = (
    "Return the k most common words in text with their counts.",
    " Words are compared case-insensitively, using tokenize.",
    " Ties are broken alphabetically.",
    "\n    >>> top_words('b a b c a b', 2)\n    [('b', 3), ('a', 2)]",
)


def demo_request(units: int) -> Request:
    """The demo file with the first `units` spec units typed and the docstring closed."""
    spec = "".join(DEMO_UNITS[:units])
    return Request(f'{DEMO_FILE_HEAD}{spec}\n    """\n')


def run_engine_demo(settings: dict) -> None:
    """Replay the demo spec against the engine and print per-unit and residual figures."""
    engine = load_engine(validate_engine_config(settings))
    info = engine.runtime.info
    print(f"model {engine.config.model} on {info.kind} ({info.device}, {info.dtype})")
    engine.open("demo")
    last = len(DEMO_UNITS)
    for units in range(1, last):
        done = engine.update("demo", demo_request(units), version=units)
        cost = done.cost
        print(
            f"unit {units}: kept {cost.accepted_tokens}/{cost.draft_tokens} draft tokens, "
            f"wrote {cost.generated_tokens} ({cost.lookahead_tokens} from the stale draft), "
            f"{cost.forwards} forwards, {cost.wall_ms:.0f} ms"
        )
    final = engine.finalize("demo", demo_request(last), version=last)
    warm = engine.generate(demo_request(last), warm_from=demo_request(last - 1))
    print("\n--- answer ---")
    print(final.text)
    print("--- residual cost at trigger ---")
    print(f"streaming: {final.cost.forwards} forwards, {final.cost.wall_ms:.0f} ms")
    print(f"plain:     {warm.cost.forwards} forwards, {warm.cost.wall_ms:.0f} ms")
    ratio = warm.cost.wall_ms / max(final.cost.wall_ms, 1e-6)
    forwards = warm.cost.forwards / max(final.cost.forwards, 1)
    print(f"speedup:   {forwards:.1f}x forwards, {ratio:.1f}x wall")
    print(f"identical to plain greedy decoding: {final.token_ids == warm.token_ids}")
