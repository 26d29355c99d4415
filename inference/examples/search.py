"""Alternatives to an answer whose spec's examples fail: sampled answers, tried until one passes.

The greedy answer is the one prewrite shows; when its examples fail and the machine has time,
a bounded number of sampled answers (the engine's `sample`, seeds 1, 2, ...) are run against
the same examples and the first that passes is offered beside it, marked as not the greedy
answer. The server (lsp_server/searches.py) and the benchmark (`bench pass1 --search`) follow
this one plan.
"""

from __future__ import annotations

from collections.abc import Iterator

# Sampled alternatives are drawn at this temperature unless set: low enough that most samples
# are still plausible code, high enough that they differ from the greedy answer.
SEARCH_TEMPERATURE = 0.8


def examples_pass(passed: int, total: int) -> bool:
    """True when every one of a spec's examples passed (and there was at least one)."""
    return total > 0 and passed == total


class SearchPlan:
    """The seeds to try for one answer, skipping samples equal to a text already tried."""

    def __init__(self, tries: int, greedy: str):
        self.tries = tries
        self._tried = {greedy.strip()}
        self.drawn = 0  # samples drawn so far
        self.run = 0  # of them, new texts whose examples were run

    def seeds(self) -> Iterator[int]:
        """Seeds 1..tries, in order."""
        yield from range(1, self.tries + 1)

    def is_new(self, text: str) -> bool:
        """Count a drawn sample; True when its text was not tried before (run its examples)."""
        self.drawn += 1
        key = text.strip()
        if not key or key in self._tried:
            return False
        self._tried.add(key)
        self.run += 1
        return True
