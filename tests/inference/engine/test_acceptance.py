"""The acceptance rules (`inference/engine/acceptance.py`): exact, threshold, sample."""

from __future__ import annotations

import pytest
import torch

from inference.engine.acceptance import ExactRule, SampleRule, ThresholdRule

pytestmark = pytest.mark.timeout(60)


def logits_for(probs: list[list[float]]) -> torch.Tensor:
    return torch.log(torch.tensor(probs, dtype=torch.float64))


def test_exact_rule_keeps_greedy_prefix_and_returns_the_correction():
    rows = logits_for([[0.1, 0.7, 0.2], [0.6, 0.3, 0.1], [0.2, 0.2, 0.6]])
    assert ExactRule().accept(rows, [1, 1]) == (1, 0)
    assert ExactRule().accept(rows, [1, 0]) == (2, 2)  # all kept: the bonus token follows


def test_threshold_rule_keeps_tokens_above_tau():
    rows = logits_for([[0.5, 0.35, 0.15], [0.5, 0.25, 0.25], [0.2, 0.2, 0.6]])
    assert ThresholdRule(0.3).accept(rows, [1, 1]) == (1, 0)
    assert ThresholdRule(0.2).accept(rows, [1, 1]) == (2, 2)


def test_sample_rule_matches_the_rejection_sampling_formula():
    """p = (0.5, 0.3, 0.2), proposal x = 1: keep with p(x) = 0.3, else draw from p without x."""
    p = [0.5, 0.3, 0.2]
    rows = logits_for([p, [1 / 3, 1 / 3, 1 / 3]])
    rule = SampleRule(temperature=1.0, seed=1234)
    trials = 20000
    kept = 0
    counts = [0, 0, 0]
    for _ in range(trials):
        n, following = rule.accept(rows, [1])
        kept += n
        counts[1 if n else following] += 1
    assert abs(kept / trials - 0.3) < 0.015
    for observed, expected in zip(counts, p, strict=True):
        assert abs(observed / trials - expected) < 0.015
    # the rejected branch draws from norm(max(p - q, 0)) = (0.5, 0, 0.2) / 0.7; never x again
    assert counts[1] == kept
