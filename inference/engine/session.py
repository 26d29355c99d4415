"""One spec being written: its KV cache, its draft, and the verify-accept-regenerate loop."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import torch

from inference.api import Cost
from inference.engine.acceptance import AcceptanceRule, lookahead_rule
from inference.engine.kvcache import KVState, Steps
from inference.engine.lookahead import StaleDraft
from inference.engine.stopping import ScanState, StopRule
from inference.runtimes.base import ShapeHints

if TYPE_CHECKING:
    from inference.drafter.drafter import Drafter


_REMEMBERED = 8  # earlier drafts kept per session


class Session:
    """The draft of one answer and the cache it was written with.

    Invariants between calls: `draft[:verified]` are the tokens the model chooses for
    `prompt_ids` (under the acceptance rule); `finished` means they form a complete answer; the
    KV cache holds a prefix of prompt_ids + draft.
    """

    def __init__(
        self,
        kv: KVState,
        rule: AcceptanceRule,
        shape: ShapeHints,
        drafter: Drafter | None = None,
    ):
        self.kv = kv
        self.rule = rule
        self.lookahead_rule = lookahead_rule(rule)
        # lookahead: stale-draft tokens proposed per forward (0: off); verify_chunk: the first
        # chunk of a chunked verify (0: one pass)
        self.shape = shape
        self.drafter = drafter  # proposes blocks when the stale draft has nothing to offer
        self.prompt_ids: list[int] = []
        self.draft: list[int] = []
        self.earlier_drafts: list[list[int]] = []  # newest last: recalled by the lookahead
        self.verified = 0
        self.finished = False
        # a respec's second cache: the spec as it was before the change (Engine.rewrite)
        self.contrast: KVState | None = None

    @property
    def cache_bytes(self) -> int:
        """Bytes the runtime holds for this session's caches."""
        contrast = self.contrast.sequence.cache_bytes if self.contrast else 0
        return self.kv.sequence.cache_bytes + contrast

    def evict(self) -> None:
        """Drop the caches (their tokens are fed again when next used)."""
        for kv in (self.kv, self.contrast):
            if kv is not None:
                kv.evict()

    def close(self) -> None:
        """Free the runtime's caches of this session."""
        for kv in (self.kv, self.contrast):
            if kv is not None:
                kv.close()

    def sync(
        self,
        prompt_ids: Sequence[int],
        stop: StopRule,
        check: Callable[[], None],
        prefill_chunk: int = 0,
    ) -> Steps[Cost]:
        """Bring the draft up to date with `prompt_ids`: verify, accept, regenerate.

        A generator of the forwards this takes (see kvcache.py); it returns the cost.
        `check` is called before every forward and raises to abandon the work; the session
        stays consistent and the next call resumes from what was done. With `prefill_chunk`
        the changed prompt goes in forwards of at most that many tokens, checked between.
        """
        start = time.perf_counter()
        forwards = self.kv.forwards
        cost = Cost(acceptance=self.rule.name)
        if list(prompt_ids) != self.prompt_ids:
            self.prompt_ids = list(prompt_ids)
            self.verified, self.finished = 0, False
        requests, sent = self.kv.requests, self.kv.request_tokens
        try:
            if not self.finished:
                yield from self._verify_and_regenerate(stop, check, cost, prefill_chunk)
        finally:
            self.kv.settle()
            cost.forwards = self.kv.forwards - forwards
            cost.generate_requests = self.kv.requests - requests - cost.verify_requests
            cost.generate_request_tokens = (
                self.kv.request_tokens - sent - cost.verify_request_tokens
            )
            cost.wall_ms = (time.perf_counter() - start) * 1000.0
        return cost

    def prefill(
        self, prompt_ids: Sequence[int], check: Callable[[], None], prefill_chunk: int = 0
    ) -> Steps[int]:
        """Encode `prompt_ids` ahead of the first `sync` (a document read before it is
        edited), so that a prompt beginning the same way finds that part cached; nothing once
        the session has a prompt (the cache is its draft's). Returns the tokens cached."""
        if self.prompt_ids:
            return 0
        try:
            check()
            yield from self._encode(prompt_ids, check, prefill_chunk)
            yield from self.kv.score(prompt_ids, [])
        finally:
            self.kv.settle()
        return len(self.kv.ids)

    def _encode(
        self, context: Sequence[int], check: Callable[[], None], prefill_chunk: int
    ) -> Steps[None]:
        """The tokens of `context` not cached, but its last, in forwards of `prefill_chunk`
        (0: none here, the next forward takes them all); a newer version stops the work
        between two (`check`), what was encoded staying cached."""
        while prefill_chunk and (yield from self.kv.prefill(context, prefill_chunk)):
            check()

    def _verify_and_regenerate(
        self, stop: StopRule, check: Callable[[], None], cost: Cost, prefill_chunk: int = 0
    ) -> Steps[None]:
        check()
        yield from self._encode(self.prompt_ids + self.draft[: self.verified], check, prefill_chunk)
        start = self.verified
        _, end = stop.scan(self.draft)  # the answer would end inside the draft: verify no further
        proposals = self.draft[start : end if end is not None and end > start else None]
        drafter = self.drafter
        noise = drafter.tail_for(len(proposals)) if drafter else 0
        requests, sent = self.kv.requests, self.kv.request_tokens
        try:
            kept, following, tail, guesses = yield from self._verify(proposals, check, noise)
        finally:
            cost.verify_requests = self.kv.requests - requests
            cost.verify_request_tokens = self.kv.request_tokens - sent
        cost.draft_tokens, cost.accepted_tokens = len(proposals), kept
        diverged = kept < len(proposals)
        self._remember(self.draft)
        stale = None
        if self.shape.lookahead:
            stale = StaleDraft(
                proposals[kept:],
                history=self.earlier_drafts,
                min_match=self.shape.lookahead_match,
                first=self.shape.lookahead_first,
            )
        del self.draft[start + kept :]
        self.verified = len(self.draft)
        self.kv.truncate(len(self.prompt_ids) + self.verified, tail=tail)
        state, end = stop.scan(self.draft)
        if end is not None:
            self._finish(end)
            return
        # the tail guessed what follows the whole draft: of use only when all of it was kept
        block = None
        if guesses is not None and not diverged:
            block = self.lookahead_rule.propose(guesses)
        yield from self._regenerate(following, state, stale, stop, check, cost, block)

    def _verify(
        self, proposals: list[int], check: Callable[[], None], noise: int
    ) -> Steps[tuple[int, int, torch.Tensor, torch.Tensor | None]]:
        """How many proposals the model keeps, the token after them, its row, the tail's guesses.

        One forward over (changed context + proposals), or with `verify_chunk` chunks of
        doubling size that stop at the first rejection: on a CPU, where a forward costs about
        as much per token as decoding, the draft past a rejected token is not paid for. Kept
        chunks count as verified at once, so a newer version stopping the work between two
        (`check`) loses none of them.
        """
        context = self.prompt_ids + self.draft[: self.verified]
        size = self.shape.verify_chunk or len(proposals)
        chunk = proposals[:size]
        rows, guesses = yield from self.kv.score(context, chunk, noise)  # [len(chunk) + 1, V]
        done = 0
        while True:
            kept, following = self.rule.accept(rows, chunk)
            done += kept
            if kept < len(chunk) or done == len(proposals):
                return done, following, rows[kept], guesses
            self.verified += kept
            size *= 2
            chunk = proposals[done : done + size]
            check()
            fed, guesses = yield from self.kv.feed(chunk, noise)
            rows = torch.cat([rows[-1:], fed])  # the last row predicts the chunk's first token

    def _regenerate(
        self,
        token: int,
        state: ScanState,
        stale: StaleDraft | None,
        stop: StopRule,
        check: Callable[[], None],
        cost: Cost,
        drafted: tuple[list[int], torch.Tensor | None] | None = None,
    ) -> Steps[None]:
        """Decode from the accepted prefix; each forward also checks proposed tokens.

        Proposals come from the stale draft's lookahead, or else from the block the drafter
        guessed in the previous forward (`drafted` for the first); the AR weights decide.
        """
        block, block_q = drafted or ([], None)  # the drafter's guess of the tokens after `token`
        drafter = self.drafter
        while True:
            state, done = self._append(token, state, stop, cost)
            if done:
                return
            proposals = stale.propose(self.draft, self.shape.lookahead) if stale else []
            q, from_drafter = None, False
            if not proposals and block:
                proposals, q, from_drafter = block, block_q, True
            noise = drafter.tail_for(len(proposals)) if drafter else 0
            check()
            rows, guesses = yield from self.kv.feed([token, *proposals], noise)
            kept, token = self.lookahead_rule.accept(rows, proposals, q)
            if stale and not from_drafter:
                stale.advance(kept, len(proposals))
            # the noisy tail guessed what follows all the proposals: useless after a rejection
            block, block_q = [], None
            if guesses is not None and noise and kept == len(proposals):
                block, block_q = self.lookahead_rule.propose(guesses)
            for proposal in proposals[:kept]:
                if from_drafter:
                    cost.drafter_tokens += 1
                else:
                    cost.lookahead_tokens += 1
                state, done = self._append(proposal, state, stop, cost)
                if done:
                    return
            self.kv.truncate(len(self.prompt_ids) + len(self.draft), tail=rows[kept])

    def _remember(self, draft: list[int]) -> None:
        """Keep the last few distinct drafts for the lookahead to recall."""
        if draft and (not self.earlier_drafts or self.earlier_drafts[-1] != draft):
            self.earlier_drafts = [*self.earlier_drafts[-(_REMEMBERED - 1) :], list(draft)]

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
