"""One sequence's cached tokens: feed tokens, score proposals, rewind by position.

The model work is asked for, not done: `feed` and `score` are generators that yield one
`Feed` per forward and are sent back its `Output`, so that a driver (engine.py) can put the
forwards of several sessions into one batched forward of the runtime.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Sequence
from typing import TypeVar

import torch

from inference.runtimes.base import Feed, Output, RuntimeSequence

T = TypeVar("T")
Steps = Generator[Feed, Output, T]  # yields forwards, is sent their logits, returns T
Rows = tuple[torch.Tensor, torch.Tensor | None]  # logits of the tokens, of the noisy tail


def common_prefix_length(a: Sequence[int], b: Sequence[int]) -> int:
    """Length of the longest common leading run of two token sequences."""
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


def run_alone(steps: Steps[T], forward: Callable[[list[Feed]], list[Output]]) -> T:
    """Drive `steps` to the end, one forward at a time through `forward(feeds) -> outputs`."""
    try:
        feed = next(steps)
        while True:
            (output,) = forward([feed])
            feed = steps.send(output)
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]


def run_together(
    all_steps: list[Steps[T]],
    forward: Callable[[list[Feed]], list[Output]],
    on_done: Callable[[int, T | Exception], None] | None = None,
    admit: Callable[[], list[Steps[T]]] | None = None,
) -> list[T | Exception]:
    """Drive several `steps` in lockstep: each round, one `forward` over all their feeds.

    Each result is what its steps returned or the exception that ended them (the others
    go on); an exception from `forward` itself ends them all. `on_done(i, result)` hears of
    each as soon as it ends, while the others may still run. Before each round `admit()`
    may give more steps, which join from that round on (numbered after those before).
    """
    all_steps = list(all_steps)
    results: list[T | Exception | None] = [None] * len(all_steps)
    pending: dict[int, Feed] = {}

    def advance(i: int, output: Output | None) -> None:
        steps = all_steps[i]
        result: T | Exception
        try:
            pending[i] = next(steps) if output is None else steps.send(output)
            return
        except StopIteration as done:
            result = done.value
        except Exception as exc:  # noqa: BLE001 - one session's failure ends that session only
            result = exc
        results[i] = result
        pending.pop(i, None)
        if on_done is not None:
            on_done(i, result)

    for i in range(len(all_steps)):
        advance(i, None)
    try:
        while True:
            for steps in admit() if admit is not None else []:
                all_steps.append(steps)
                results.append(None)
                advance(len(all_steps) - 1, None)
            if not pending:
                break
            order = list(pending)
            for i, output in zip(order, forward([pending[i] for i in order]), strict=True):
                advance(i, output)
    finally:
        for i in pending:
            all_steps[i].close()
    return results  # type: ignore[return-value]


class KVState:
    """The tokens cached for one sequence and the logits after the last one.

    Invariant: `ids` lists the tokens in the runtime's cache of `sequence` (a runtime may
    evict it, which `_resync` notices), and `tail` (when not None) is the model's output
    at the last of them.
    """

    def __init__(self, sequence: RuntimeSequence):
        self.sequence = sequence
        self.forwards = 0
        self.requests = 0  # requests a runtime behind a wire made for this sequence
        self.request_tokens = 0  # token ids they carried
        self.ids: list[int] = []
        self.tail: torch.Tensor | None = None  # [V] float32

    def feed(self, tokens: Sequence[int], noise: int = 0) -> Steps[Rows]:
        """One forward over `tokens` (plus `noise` noisy positions): their logits [n, V].

        The noisy positions' logits [noise, V] come second; only `tokens` stay cached.
        """
        assert tokens, "feed needs at least one token"
        return (yield from self._feed(list(tokens), 0, noise))

    def truncate(self, length: int, tail: torch.Tensor | None = None) -> None:
        """Keep the first `length` cached tokens; `tail` is the known output at the new end."""
        self._resync()
        if length < len(self.ids):
            self.sequence.truncate(length)
            del self.ids[length:]
            self.tail = tail
        elif tail is not None:
            self.tail = tail

    def score(
        self, context: Sequence[int], proposals: Sequence[int], noise: int = 0
    ) -> Steps[Rows]:
        """Logits predicting each proposal and the token after them: [len(proposals) + 1, V].

        Reuses the cached common prefix and runs at most one forward, over only the tokens of
        `context` that changed plus the proposals (and `noise` noisy positions after them,
        whose logits come second: None when no forward ran).
        """
        assert context, "score needs a non-empty context"
        self._resync()
        full = list(context) + list(proposals)
        need = len(context) - 1  # position whose output predicts proposals[0]
        shared = common_prefix_length(self.ids, full)
        if shared == len(self.ids) == need + 1 and self.tail is not None:
            first = self.tail[None]  # [1, V], already computed
            if len(full) == shared:
                return first, None
            rows, guesses = yield from self._feed(full[shared:], 0, noise)
            return torch.cat([first, rows]), guesses
        keep = min(shared, need)
        self.truncate(keep)
        return (yield from self._feed(full[keep:], need - keep, noise))

    def prefill(self, context: Sequence[int], most: int) -> Steps[bool]:
        """Encode up to `most` of the tokens of `context` not cached yet, never its last one
        (`score` runs that with the proposals): one forward, or none and False when no more
        than `most` are left."""
        self._resync()
        need = len(context) - 1
        shared = common_prefix_length(self.ids, list(context[:need]))
        if need - shared <= most:
            return False
        self.truncate(shared)
        yield from self._feed(list(context[shared : shared + most]), most - 1, 0)
        return True

    def fork(self) -> KVState:
        """A new state that starts with this one's cached tokens."""
        self._resync()
        twin = KVState(self.sequence.fork())
        twin.ids, twin.tail = list(self.ids), self.tail
        return twin

    def evict(self) -> None:
        """Drop the cache (its tokens are fed again when the sequence is next used)."""
        self.truncate(0)

    def settle(self) -> None:
        """No more forwards until the next update: the runtime stops what it ran ahead."""
        self.sequence.settle()

    def close(self) -> None:
        """Free the runtime's cache of this sequence."""
        self.sequence.close()
        self.ids, self.tail = [], None

    def _feed(self, tokens: list[int], first_row: int, noise: int) -> Steps[Rows]:
        lost = self._resync()  # evicted since the last forward: encode those tokens again
        output = yield Feed(self.sequence, lost + tokens, first_row + len(lost), noise)
        self.forwards += 1
        self.requests += output.requests
        self.request_tokens += output.request_tokens
        self.ids.extend(lost + tokens)
        self.tail = output.rows[-1]
        return output.rows, output.noise_rows

    def _resync(self) -> list[int]:
        """Match `ids` to what the runtime still caches; the tokens it dropped."""
        cached = self.sequence.length
        if cached >= len(self.ids):
            return []
        lost = self.ids[cached:]
        del self.ids[cached:]
        self.tail = None
        return lost
