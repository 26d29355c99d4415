"""One sequence's KV cache: feed tokens, score proposals, rewind by position."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import nullcontext
from typing import TYPE_CHECKING

import torch
from transformers import DynamicCache

if TYPE_CHECKING:
    from inference.drafter.drafter import Drafter

ForwardHook = Callable[[int], None]


def common_prefix_length(a: Sequence[int], b: Sequence[int]) -> int:
    """Length of the longest common leading run of two token sequences."""
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


class KVState:
    """The cached tokens of one sequence, their KV tensors and the logits after the last one.

    Invariant: `ids` lists exactly the tokens whose keys and values are in `cache`, and `tail`
    (when not None) is the model's output at the last of them.
    """

    def __init__(self, model: torch.nn.Module, device: torch.device, on_forward: ForwardHook):
        self.model = model
        self.device = device
        self.on_forward = on_forward  # called with the token count of every forward
        self.forwards = 0
        self.ids: list[int] = []
        self.cache = DynamicCache()
        self.tail: torch.Tensor | None = None  # [V] float32

    def feed(self, tokens: Sequence[int]) -> torch.Tensor:
        """Run one forward over `tokens` appended to the cache; return their logits [n, V]."""
        return self.feed_drafting(tokens, None, 0)[0]

    def feed_drafting(
        self, tokens: Sequence[int], drafter: Drafter | None, noise: int
    ) -> tuple[torch.Tensor, torch.Tensor]:
        """One forward over `tokens` plus `noise` noisy positions drafted through the gate.

        Returns the logits of `tokens` [n, V] (AR weights only) and of the noisy positions
        [noise, V] (AR + LoRA). Only `tokens` stay in the cache: the noisy keys and values
        were computed with the LoRA and are dropped.
        """
        assert tokens, "feed needs at least one token"
        ids = list(tokens) + ([drafter.noise_id] * noise if drafter else [])
        input_ids = torch.tensor([ids], dtype=torch.long, device=self.device)  # [1, n + noise]
        gate = torch.zeros((1, len(ids)), dtype=torch.bool, device=self.device)  # [1, n + noise]
        gate[0, len(tokens) :] = True
        with torch.inference_mode(), drafter.gate.open_at(gate) if drafter else nullcontext():
            out = self.model(input_ids=input_ids, cache=self.cache, use_cache=True)
        self.forwards += 1
        self.on_forward(len(ids))
        logits = out.logits[0].float()  # [n + noise, V]
        if len(ids) > len(tokens):
            self.cache.crop(-(len(ids) - len(tokens)))
        self.ids.extend(tokens)
        self.tail = logits[len(tokens) - 1]
        return logits[: len(tokens)], logits[len(tokens) :]

    def truncate(self, length: int, tail: torch.Tensor | None = None) -> None:
        """Keep the first `length` cached tokens; `tail` is the known output at the new end."""
        if length < len(self.ids):
            if length == 0:
                self.cache = DynamicCache()
            else:
                self.cache.crop(-(len(self.ids) - length))  # transformers 5: negative = drop
            del self.ids[length:]
            self.tail = tail
        elif tail is not None:
            self.tail = tail

    def score(self, context: Sequence[int], proposals: Sequence[int]) -> torch.Tensor:
        """Logits predicting each proposal and the token after them: [len(proposals) + 1, V].

        Reuses the cached common prefix and runs at most one forward, over only the tokens of
        `context` that changed plus the proposals.
        """
        return self.score_drafting(context, proposals, None, 0)[0]

    def score_drafting(
        self,
        context: Sequence[int],
        proposals: Sequence[int],
        drafter: Drafter | None,
        noise: int,
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """`score`, with a noisy tail drafting what follows the proposals when it runs a forward.

        The second result is the tail's logits [noise, V], or None when no forward ran.
        """
        assert context, "score needs a non-empty context"
        full = list(context) + list(proposals)
        need = len(context) - 1  # position whose output predicts proposals[0]
        shared = common_prefix_length(self.ids, full)
        if shared == len(self.ids) == need + 1 and self.tail is not None:
            first = self.tail[None]  # [1, V], already computed
            if len(full) == shared:
                return first, None
            rows, guesses = self.feed_drafting(full[shared:], drafter, noise)
            return torch.cat([first, rows]), guesses
        keep = min(shared, need)
        self.truncate(keep)
        rows, guesses = self.feed_drafting(full[keep:], drafter, noise)
        return rows[need - keep :], guesses
