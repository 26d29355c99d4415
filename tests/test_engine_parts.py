"""The engine's parts on their own: acceptance rules, stop rules, lookahead.

KV reuse is tested on both runtimes in test_runtimes.py.
"""

from __future__ import annotations

import pytest
import torch

from inference.engine.acceptance import ExactRule, SampleRule, ThresholdRule
from inference.engine.lookahead import StaleDraft
from inference.engine.stopping import BodyEnd

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


def test_python_body_end_cuts_before_the_dedented_line():
    rule = BodyEnd(language="python", def_indent=0)
    start = rule.initial_state('def f(x):\n    """Spec."""\n')
    text = "    y = x + 1\n\n    return y\n\ndef g():\n"
    _, cut = rule.scan(start, text)
    assert text[:cut] == "    y = x + 1\n\n    return y\n\n"


def test_python_body_end_ignores_indented_and_blank_lines():
    rule = BodyEnd(language="python", def_indent=4)
    start = rule.initial_state("class A:\n    def f(self):\n        ")
    _, cut = rule.scan(start, "return 1\n\n        # done\n")
    assert cut is None
    _, cut = rule.scan(start, "return 1\n    def g(self):\n")
    assert cut == len("return 1\n")


def test_brace_body_end_keeps_the_closing_brace():
    rule = BodyEnd(language="brace", def_indent=0)
    start = rule.initial_state("function f(a) {\n  // add one\n")
    text = "  return a + 1;\n}\n\nfunction g() {"
    _, cut = rule.scan(start, text)
    assert text[:cut] == "  return a + 1;\n}"


def test_stop_strings_cut_before_the_string():
    rule = BodyEnd(language="python", def_indent=None, stop_strings=("```",))
    _, cut = rule.scan(rule.initial_state(""), "x = 1\n```\nmore")
    assert cut == len("x = 1\n")


def test_scan_in_pieces_equals_scan_at_once():
    rule = BodyEnd(language="python", def_indent=0, stop_strings=("<stop>",))
    start = rule.initial_state("def f():\n")
    text = "    a = 1\n    b = '<st'\n    <stop>"
    _, whole = rule.scan(start, text)
    state, cut, fed = start, None, 0
    while cut is None:
        state, cut = rule.scan(state, text[fed])
        fed += 1
    assert whole == cut == text.index("<stop>")
    assert fed == len(text)


def test_lookahead_realigns_after_substitution_insertion_and_deletion():
    stale = [10, 11, 12, 13, 14, 15]  # starts with the rejected token 10
    substituted = StaleDraft(stale)
    assert substituted.propose([1, 2, 99], 3) == [11, 12, 13]
    inserted = StaleDraft(stale)
    assert inserted.propose([1, 2, 99, 10], 3) == [11, 12, 13]
    deleted = StaleDraft(stale)
    assert deleted.propose([1, 2, 11], 3) == [12, 13, 14]
    exhausted = StaleDraft([10])
    assert exhausted.propose([1, 2, 99], 3) == []


def test_lookahead_cursor_moves_past_a_rejected_proposal():
    draft = StaleDraft([10, 11, 12, 13, 14, 15])
    assert draft.propose([99], 2) == [11, 12]
    draft.advance(1, 2)  # 11 kept, 12 replaced by the model's own token
    assert draft.propose([99, 11, 77], 2) == [13, 14]


def test_lookahead_recalls_an_earlier_draft_when_the_remainder_has_nothing():
    recalled = StaleDraft([10], history=[[1, 2, 3, 4, 5]])
    assert recalled.propose([7, 2, 3], 2) == [4, 5]  # matched on "2 3"
    assert recalled.propose([7, 3], 2) == []  # one shared token is not enough across drafts
    newest = StaleDraft([], history=[[1, 2, 3, 4], [1, 2, 3, 9]])
    assert newest.propose([2, 3], 3) == [9]
    longest = StaleDraft([10, 3, 50], history=[[1, 2, 3, 60]])
    assert longest.propose([2, 3], 1) == [60]  # a 2-token recall beats a 1-token realignment


def test_a_recalled_proposal_leaves_the_remainder_cursor_alone():
    draft = StaleDraft([10, 11, 12], history=[[5, 6, 7, 8]])
    assert draft.propose([5, 6], 1) == [7]
    draft.advance(0, 1)
    assert draft.propose([0], 2) == [11, 12]  # still right after the rejected token


def test_a_cautious_stale_draft_proposes_only_after_a_long_enough_match():
    cautious = StaleDraft([10, 11, 12, 13, 14, 15], min_match=3)
    assert cautious.propose([1, 2, 99], 4) == []  # no blind resume after a substitution
    assert cautious.propose([9, 11, 12], 4) == []  # two shared tokens are not enough
    assert cautious.propose([10, 11, 12], 4) == [13, 14, 15]
    recalled = StaleDraft([], history=[[1, 2, 3, 4, 5]], min_match=3)
    assert recalled.propose([7, 2, 3], 2) == []
    assert recalled.propose([1, 2, 3], 2) == [4, 5]


def test_proposal_blocks_start_small_double_while_kept_and_reset_on_a_rejection():
    draft = StaleDraft(list(range(100, 140)), min_match=2, first=2)
    assert draft.propose([100, 101], 16) == [102, 103]
    draft.advance(2, 2)
    assert draft.propose([100, 101, 102, 103, 104], 16) == [105, 106, 107, 108]
    draft.advance(4, 4)
    assert draft.propose([107, 108, 109], 16) == list(range(110, 118))
    draft.advance(0, 8)  # the model said 777, not 110
    assert draft.propose([109, 777], 16) == []
    draft.advance(0, 0)  # a forward without proposals changes nothing
    assert draft.propose([777, 111, 112], 16) == [113, 114]
    capped = StaleDraft(list(range(100, 140)), min_match=2, first=8)
    assert len(capped.propose([100, 101], 3)) == 3  # the forward's limit still holds
