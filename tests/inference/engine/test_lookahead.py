"""Stale-draft lookahead (`inference/engine/lookahead.py`): realigning, recalling, blocks."""

from __future__ import annotations

import pytest

from inference.engine.lookahead import StaleDraft

pytestmark = pytest.mark.timeout(60)


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
