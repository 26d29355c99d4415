"""One sequence's KV cache: feed tokens, score proposals, rewind by position."""

from __future__ import annotations

from collections.abc import Callable, Sequence

import torch
from transformers import DynamicCache

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
        assert tokens, "feed needs at least one token"
        input_ids = torch.tensor([list(tokens)], dtype=torch.long, device=self.device)  # [1, n]
        with torch.inference_mode():
            out = self.model(input_ids=input_ids, cache=self.cache, use_cache=True)
        self.forwards += 1
        self.on_forward(len(tokens))
        logits = out.logits[0].float()  # [n, V]
        self.ids.extend(tokens)
        self.tail = logits[-1]
        return logits

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
        assert context, "score needs a non-empty context"
        full = list(context) + list(proposals)
        need = len(context) - 1  # position whose output predicts proposals[0]
        shared = common_prefix_length(self.ids, full)
        if shared == len(self.ids) == need + 1 and self.tail is not None:
            first = self.tail[None]  # [1, V], already computed
            if len(full) == shared:
                return first
            return torch.cat([first, self.feed(full[shared:])])
        keep = min(shared, need)
        self.truncate(keep)
        return self.feed(full[keep:])[need - keep :]
