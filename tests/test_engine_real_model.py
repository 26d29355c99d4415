"""Streaming on a real model (smollm2-135m, chat format): lossless and cheaper at trigger."""

from __future__ import annotations

import pytest

from inference.api import Request
from inference.config import EngineConfig
from inference.engine import Engine

pytestmark = pytest.mark.real_model

HEAD = 'import math\n\n\ndef is_prime(n: int) -> bool:\n    """'
STEPS = (
    "Return True if n is a prime number.",
    " A prime has exactly two divisors.",
    "\n    >>> is_prime(7)\n    True\n    >>> is_prime(8)\n    False",
)


def typed(steps: int) -> Request:
    return Request(HEAD + "".join(STEPS[:steps]) + '\n    """\n')


@pytest.fixture(scope="module")
def engine(real_model_name) -> Engine:
    return Engine.load(
        EngineConfig(model=real_model_name, prompt_format="chat", max_tokens=128, threads=2)
    )


def test_docstring_typed_in_three_steps_equals_plain_greedy(engine):
    engine.open("spec")
    engine.update("spec", typed(1), version=1)
    engine.update("spec", typed(2), version=2)
    streamed = engine.finalize("spec", typed(3), version=3)
    plain = engine.generate(typed(3))
    assert streamed.token_ids == plain.token_ids
    assert streamed.text == plain.text
    assert "return" in streamed.text
    assert streamed.cost.forwards < plain.cost.forwards
    assert streamed.cost.draft_tokens > 0


def test_threshold_mode_finishes_and_reports_its_rule(real_model_name):
    engine = Engine.load(
        EngineConfig(
            model=real_model_name, prompt_format="chat", max_tokens=64, acceptance="threshold"
        )
    )
    engine.open("spec")
    engine.update("spec", typed(2), version=1)
    answer = engine.finalize("spec", typed(3), version=2)
    assert answer.finished
    assert answer.cost.acceptance == "threshold"


def test_sample_mode_with_a_fixed_seed_is_reproducible(real_model_name):
    def run() -> list[int]:
        engine = Engine.load(
            EngineConfig(
                model=real_model_name, prompt_format="chat", max_tokens=48,
                acceptance="sample", seed=3,
            )
        )  # fmt: skip
        engine.open("spec")
        engine.update("spec", typed(2), version=1)
        return engine.finalize("spec", typed(3), version=2).token_ids

    assert run() == run()
