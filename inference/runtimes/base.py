"""The runtime seam: what the streaming algorithm needs from whatever runs the model.

A runtime loads one model and its tokenizer, keeps a cache per open sequence, and runs
forwards: each `Feed` appends tokens to one sequence's cache and asks for the logits of its
last rows. Several feeds in one `forward` call may share one batched forward (llama.cpp);
a runtime that cannot batch runs them one after another. Logits come back as float32 torch
tensors, so the acceptance rules work on any runtime (`torch.from_numpy` costs no copy).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from inference.api import RuntimeInfo

if TYPE_CHECKING:
    import torch
    from transformers import PreTrainedTokenizerBase

    from inference.adapters.drafter import Drafter

ForwardHook = Callable[[int], None]  # called with the token count of every forward


class RuntimeSequence(Protocol):
    """One sequence's cache inside a runtime."""

    @property
    def length(self) -> int:
        """Tokens in the cache; it drops to 0 when the runtime evicts the sequence."""
        ...

    @property
    def cache_bytes(self) -> int:
        """Memory this sequence's cache holds beyond what the runtime allocated up front."""
        ...

    def truncate(self, length: int) -> None:
        """Keep the first `length` cached tokens."""
        ...

    def fork(self) -> RuntimeSequence:
        """A new sequence that starts with this one's cache (shared where the runtime can)."""
        ...

    def settle(self) -> None:
        """The engine is done with the sequence until its next update: stop work run ahead."""
        ...

    def close(self) -> None:
        """Free the cache; the sequence is not used again."""
        ...


@dataclass
class Feed:
    """One sequence's part of a forward: tokens appended to its cache, logits of its last rows.

    `first_row` is the first of `tokens` whose logits are wanted (the rest are only cached).
    `noise` positions, drafted through a parallel drafter's gate, follow the tokens and leave
    the cache again (runtimes without a drafter take none).
    """

    sequence: RuntimeSequence
    tokens: list[int]
    first_row: int = 0
    noise: int = 0


@dataclass
class Output:
    """Logits of one feed: `rows` [len(tokens) - first_row, V], `noise_rows` [noise, V].

    A runtime behind a wire (vLLM) says what the feed cost there: the requests it made and the
    token ids they carried (0 for a step served from a running stream, and in process).
    """

    rows: torch.Tensor
    noise_rows: torch.Tensor | None = None
    requests: int = 0
    request_tokens: int = 0


@dataclass(frozen=True)
class ShapeHints:
    """How forwards are best shaped on a runtime; settings left unset take these.

    `lookahead`: stale-draft tokens worth proposing per forward (a proposal costs a fraction
    of a forward on a GPU, nearly a whole one on a CPU). `lookahead_match`: tokens the answer's
    end must share with a stale draft before it proposes (1: also resume blindly after a
    substitution); `lookahead_first`: tokens proposed after a rejection, doubled while all are
    kept (0: always `lookahead`). `verify_chunk`: the first chunk of a verify pass (0: the whole
    draft in one forward). `prefill_chunk`: while drafting, the changed context goes in forwards
    of at most this many tokens, so that newer text stops a stale draft between them instead of
    after one long forward (0: in one forward); only where the split leaves the results as they
    are (batch-invariant kernels).
    """

    lookahead: int
    verify_chunk: int
    lookahead_match: int = 1
    lookahead_first: int = 0
    prefill_chunk: int = 0


class Runtime(Protocol):
    """A loaded model behind the seam."""

    name: str  # the model as the user named it
    tokenizer: PreTrainedTokenizerBase
    context_length: int  # the longest sequence (prompt + answer) one session may hold
    eos_ids: frozenset[int]
    drafter: Drafter | None  # a parallel drafter inside the model (torch only)
    batch_limit: int  # sequences one forward can serve together (1: feeds run one by one)
    evictions: int  # caches the runtime dropped itself for room (llama.cpp's cells; else 0)
    hints: ShapeHints
    info: RuntimeInfo
    on_forward: ForwardHook

    def open_sequence(self) -> RuntimeSequence:
        """A new, empty sequence."""
        ...

    def forward(self, feeds: Sequence[Feed]) -> list[Output]:
        """Run `feeds` (one per sequence at most), in as few forwards as the runtime can."""
        ...

    def close(self) -> None:
        """Free the model; the runtime is not used again."""
        ...


def eos_ids(
    tokenizer: PreTrainedTokenizerBase, configured: int | Sequence[int] | None
) -> frozenset[int]:
    """The tokenizer's EOS and the generation config's EOS ids, as one set."""
    ids: set[int] = set()
    if tokenizer.eos_token_id is not None:
        ids.add(int(tokenizer.eos_token_id))
    if isinstance(configured, int):
        ids.add(configured)
    elif configured:
        ids.update(int(i) for i in configured)
    return frozenset(ids)
