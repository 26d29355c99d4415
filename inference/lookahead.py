"""Stale-draft lookahead: after a divergence, the rejected draft's remainder proposes tokens.

The remainder often reappears a token or two later (the model replaced, inserted or dropped a
token and then continued as before). We realign by matching the answer's last tokens against the
stale draft and propose what followed there; the acceptance rule decides, so nothing is lost.
"""

from __future__ import annotations

from collections.abc import Sequence


class StaleDraft:
    """The rejected remainder of a draft, with a cursor where it is expected to resume."""

    def __init__(self, tokens: Sequence[int], max_ngram: int = 3):
        self.tokens = list(tokens)  # starts with the rejected token itself
        self.max_ngram = max_ngram
        self.cursor = 1  # a substitution is the commonest divergence: resume after it

    def propose(self, answer: Sequence[int], limit: int) -> list[int]:
        """Up to `limit` tokens that the stale draft says come after `answer`."""
        if limit <= 0 or not self.tokens:
            return []
        start = self._realign(answer)
        if start is None:
            return []
        self.cursor = start
        return self.tokens[start : start + limit]

    def advance(self, accepted: int, proposed: int) -> None:
        """Record that `accepted` of `proposed` tokens were kept; a rejection was a substitution."""
        self.cursor += accepted + (1 if accepted < proposed else 0)

    def _realign(self, answer: Sequence[int]) -> int | None:
        """Index in the stale draft right after the longest match of the answer's tail."""
        for n in range(min(self.max_ngram, len(answer)), 0, -1):
            tail = list(answer[-n:])
            best = None
            for i in range(len(self.tokens) - n + 1):
                if self.tokens[i : i + n] != tail or i + n >= len(self.tokens):
                    continue
                # prefer the occurrence nearest to where we expected to be
                if best is None or abs(i + n - self.cursor) < abs(best - self.cursor):
                    best = i + n
            if best is not None:
                return best
        return self.cursor if self.cursor < len(self.tokens) else None
