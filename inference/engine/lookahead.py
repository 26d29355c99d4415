"""Stale-draft lookahead: after a divergence, the rejected draft's remainder proposes tokens.

The remainder often reappears a token or two later (the model replaced, inserted or dropped a
token and then continued as before). We realign by matching the answer's last tokens against the
stale draft and propose what followed there; the acceptance rule decides, so nothing is lost.

When the remainder has nothing to offer (used up, or no match), earlier drafts of the same
answer are recalled: a model that changes its mind while the spec is typed often changes it
back, or keeps pieces of an older draft. They are matched on at least two tokens.

Where each proposed token costs nearly a forward of its own (llama.cpp on a CPU), proposals are
made only after a match of `min_match` tokens, and their number starts at `first` and doubles
while the model keeps them all (back to `first` after a rejection): a block that realigns with
the stale draft is then checked at a fraction of the cost of decoding it, and a guess costs
little when it fails.
"""

from __future__ import annotations

from collections.abc import Sequence

_RECALL_MIN_NGRAM = 2  # a single shared token says too little across different drafts


class StaleDraft:
    """The rejected remainder of a draft, with a cursor where it is expected to resume."""

    def __init__(
        self,
        tokens: Sequence[int],
        max_ngram: int = 3,
        history: Sequence[Sequence[int]] = (),
        min_match: int = 1,
        first: int = 0,
    ):
        self.tokens = list(tokens)  # starts with the rejected token itself
        self.max_ngram = max(max_ngram, min_match)
        self.min_match = max(1, min_match)  # 1: also resume blindly after a substitution
        self.first = first  # tokens proposed after a rejection (0: always the limit)
        self.cursor = 1  # a substitution is the commonest divergence: resume after it
        sizes = range(max(_RECALL_MIN_NGRAM, self.min_match), self.max_ngram + 1)
        self._recall = _NgramIndex(history, sizes)
        self._from_remainder = False
        self._size = first

    def propose(self, answer: Sequence[int], limit: int) -> list[int]:
        """Up to `limit` tokens that the stale draft (or an earlier one) says follow `answer`."""
        self._from_remainder = False
        if self.first:
            limit = min(limit, self._size)
        if limit <= 0:
            return []
        for n in range(min(self.max_ngram, len(answer)), self.min_match - 1, -1):
            tail = tuple(answer[-n:])
            start = self._match(tail)
            if start is not None:
                self.cursor, self._from_remainder = start, True
                return self.tokens[start : start + limit]
            recalled = self._recall.follow(tail, limit)
            if recalled:
                return recalled
        if self.min_match == 1 and self.cursor < len(self.tokens):
            self._from_remainder = True
            return self.tokens[self.cursor : self.cursor + limit]
        return []

    def advance(self, accepted: int, proposed: int) -> None:
        """Record that `accepted` of `proposed` tokens were kept; a rejection was a substitution."""
        if self._from_remainder:
            self.cursor += accepted + (1 if accepted < proposed else 0)
        if proposed and self.first:
            self._size = self._size * 2 if accepted == proposed else self.first

    def _match(self, tail: tuple[int, ...]) -> int | None:
        """Index in the stale draft right after an occurrence of `tail`, nearest the cursor."""
        n, best = len(tail), None
        for i in range(len(self.tokens) - n + 1):
            if tuple(self.tokens[i : i + n]) != tail or i + n >= len(self.tokens):
                continue
            if best is None or abs(i + n - self.cursor) < abs(best - self.cursor):
                best = i + n
        return best


class _NgramIndex:
    """Where each n-gram of some token sequences occurs; the newest sequence wins.

    Built on the first lookup: most verify passes keep their draft and never ask.
    """

    def __init__(self, sequences: Sequence[Sequence[int]], sizes: range):
        self.sequences = sequences
        self.sizes = sizes
        self._index: dict[tuple[int, ...], tuple[int, int]] | None = None

    def follow(self, tail: tuple[int, ...], limit: int) -> list[int]:
        """The tokens after `tail`'s newest occurrence, or [] (also for tails of other sizes)."""
        if len(tail) not in self.sizes or not self.sequences:
            return []
        if self._index is None:
            self._index = self._build()
        hit = self._index.get(tail)
        if hit is None:
            return []
        which, start = hit
        return list(self.sequences[which][start : start + limit])

    def _build(self) -> dict[tuple[int, ...], tuple[int, int]]:
        index: dict[tuple[int, ...], tuple[int, int]] = {}
        for which, sequence in enumerate(self.sequences):  # later sequences overwrite earlier
            for n in self.sizes:
                for i in range(len(sequence) - n):  # something must follow the n-gram
                    index[tuple(sequence[i : i + n])] = (which, i + n)
        return index
