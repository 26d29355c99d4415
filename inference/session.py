"""One spec being written: its KV cache, its draft, and the verify-accept-regenerate loop."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from inference.acceptance import AcceptanceRule, lookahead_rule
from inference.api import Cost
from inference.kvcache import KVState
from inference.lookahead import StaleDraft
from inference.stopping import ScanState, StopRule


class Session:
    """The draft of one answer and the cache it was written with.

    Invariants between calls: `draft[:verified]` are the tokens the model chooses for
    `prompt_ids` (under the acceptance rule); `finished` means they form a complete answer; the
    KV cache holds a prefix of prompt_ids + draft.
    """

    def __init__(self, kv: KVState, rule: AcceptanceRule, lookahead: int):
        self.kv = kv
        self.rule = rule
        self.lookahead_rule = lookahead_rule(rule)
        self.lookahead = lookahead  # max stale-draft tokens proposed per forward (0: off)
        self.prompt_ids: list[int] = []
        self.draft: list[int] = []
        self.verified = 0
        self.finished = False

    def sync(
        self, prompt_ids: Sequence[int], stop: StopRule, check: Callable[[], None]
    ) -> Cost:
        """Bring the draft up to date with `prompt_ids`: verify, accept, regenerate.

        `check` is called before every forward and raises to abandon the work; the session
        stays consistent and the next call resumes from what was done.
        """
        start = time.perf_counter()
        forwards = self.kv.forwards
        cost = Cost(acceptance=self.rule.name)
        if list(prompt_ids) != self.prompt_ids:
            self.prompt_ids = list(prompt_ids)
            self.verified, self.finished = 0, False
        try:
            if not self.finished:
                self._verify_and_regenerate(stop, check, cost)
        finally:
            cost.forwards = self.kv.forwards - forwards
            cost.wall_ms = (time.perf_counter() - start) * 1000.0
        return cost

    def _verify_and_regenerate(
        self, stop: StopRule, check: Callable[[], None], cost: Cost
    ) -> None:
        check()
        proposals = self.draft[self.verified :]
        rows = self.kv.score(self.prompt_ids + self.draft[: self.verified], proposals)
        kept, following = self.rule.accept(rows, proposals)  # rows: [len(proposals) + 1, V]
        cost.draft_tokens, cost.accepted_tokens = len(proposals), kept
        stale = StaleDraft(proposals[kept:]) if kept < len(proposals) else None
        del self.draft[self.verified + kept :]
        self.verified = len(self.draft)
        self.kv.truncate(len(self.prompt_ids) + self.verified, tail=rows[kept])
        state, end = stop.scan(self.draft)
        if end is not None:
            self._finish(end)
            return
        self._regenerate(following, state, stale, stop, check, cost)

    def _regenerate(
        self,
        token: int,
        state: ScanState,
        stale: StaleDraft | None,
        stop: StopRule,
        check: Callable[[], None],
        cost: Cost,
    ) -> None:
        """Decode from the accepted prefix; each forward also checks stale-draft proposals."""
        while True:
            state, done = self._append(token, state, stop, cost)
            if done:
                return
            proposals = stale.propose(self.draft, self.lookahead) if stale else []
            check()
            rows = self.kv.feed([token, *proposals])  # [1 + len(proposals), V]
            kept, token = self.lookahead_rule.accept(rows, proposals)
            if stale:
                stale.advance(kept, len(proposals))
            for proposal in proposals[:kept]:
                cost.lookahead_tokens += 1
                state, done = self._append(proposal, state, stop, cost)
                if done:
                    return
            self.kv.truncate(len(self.prompt_ids) + len(self.draft), tail=rows[kept])

    def _append(
        self, token: int, state: ScanState, stop: StopRule, cost: Cost
    ) -> tuple[ScanState, bool]:
        """Add one model-chosen token to the draft; True when it ends the answer."""
        self.draft.append(token)
        self.verified = len(self.draft)
        cost.generated_tokens += 1
        state, done = stop.advance(state, token, len(self.draft))
        if done:
            self._finish(len(self.draft))
        return state, done

    def _finish(self, end: int) -> None:
        del self.draft[end:]
        self.verified, self.finished = end, True
        self.kv.truncate(min(len(self.kv.ids), len(self.prompt_ids) + end))
