"""The engine's typed seam: requests in, drafts and completions with cost figures out."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

Language = Literal["python", "brace"]
# not_a_body: the answer ended but is no body of the function being written (another function)
FinishReason = Literal["stop", "eos", "length", "unfinished", "not_a_body"]


@dataclass(frozen=True)
class Request:
    """What the model answers: the code before the insertion point, and optionally after it.

    `block_indent`: the answer is a block inside a function's body that already has code (a
    comment there asked for it), written at this indentation: it ends at a line indented less
    or at the first line of `suffix`, and the code below always goes in the prompt.
    `spec_start`: where in `text` the block's comment begins (a line start): a
    fill-in-the-middle prompt opens the middle with it, after the code below, so an edit of the
    comment leaves the code below encoded (None: the whole text is the prefix).
    """

    text: str
    suffix: str = ""
    language: Language = "python"
    block_indent: int | None = None
    spec_start: int | None = None


@dataclass(frozen=True)
class Update:
    """One session's `update`, for `update_many`."""

    session_id: str
    request: Request
    version: int = 0
    min_forwards: int = 0


@dataclass(frozen=True)
class CacheUse:
    """The sessions' caches: bytes held, the budget, and the caches evicted so far."""

    held: int
    budget: int
    evictions: int


@dataclass
class Cost:
    """Work one engine call did: forwards, wall time and what happened to the draft."""

    forwards: int = 0
    wall_ms: float = 0.0
    draft_tokens: int = 0  # draft tokens offered to the verify pass
    accepted_tokens: int = 0  # leading draft tokens the acceptance rule kept
    generated_tokens: int = 0  # tokens written after the accepted prefix
    lookahead_tokens: int = 0  # generated tokens that came from the stale-draft lookahead
    drafter_tokens: int = 0  # generated tokens the parallel drafter proposed
    verify_requests: int = 0  # runtimes behind a wire (vLLM): requests of the verify pass
    verify_request_tokens: int = 0  # token ids those requests carried
    generate_requests: int = 0  # requests (streams) that regenerated
    generate_request_tokens: int = 0
    acceptance: str = "exact"

    def add(self, other: Cost) -> None:
        """Accumulate another call's cost into this one."""
        self.forwards += other.forwards
        self.wall_ms += other.wall_ms
        self.draft_tokens += other.draft_tokens
        self.accepted_tokens += other.accepted_tokens
        self.generated_tokens += other.generated_tokens
        self.lookahead_tokens += other.lookahead_tokens
        self.drafter_tokens += other.drafter_tokens
        self.verify_requests += other.verify_requests
        self.verify_request_tokens += other.verify_request_tokens
        self.generate_requests += other.generate_requests
        self.generate_request_tokens += other.generate_request_tokens


@dataclass
class Completion:
    """An answer: its text, its tokens, why it ended and what producing it cost."""

    text: str
    token_ids: list[int]
    finish_reason: FinishReason
    cost: Cost
    version: int = 0
    prompt_tokens: int = 0

    @property
    def finished(self) -> bool:
        """True when the answer reached a stop (not cut short by cancellation)."""
        return self.finish_reason != "unfinished"


@dataclass
class Rewrite:
    """A body a person wrote, checked against its function's changed spec (`Engine.rewrite`).

    `text` is the body the spec now asks for: the person's lines the model still accepts, kept
    as they were, and the model's lines in place of the others. `finish_reason` says why it
    ended ("length": cut short, not a whole body).
    """

    text: str
    finish_reason: FinishReason
    kept_lines: int  # of the person's lines
    body_lines: int
    cost: Cost
    version: int = 0


@dataclass
class ForwardCounter:
    """Model forwards by phase: drafting while typing, residual after trigger, baseline."""

    by_phase: dict[str, int] = field(default_factory=dict)
    tokens_by_phase: dict[str, int] = field(default_factory=dict)

    def record(self, phase: str, tokens: int) -> None:
        """Count one forward over `tokens` positions in `phase`."""
        self.by_phase[phase] = self.by_phase.get(phase, 0) + 1
        self.tokens_by_phase[phase] = self.tokens_by_phase.get(phase, 0) + tokens


@dataclass(frozen=True)
class RuntimeInfo:
    """What a runtime is, for people and for results files."""

    kind: str  # "torch", "llamacpp" or "vllm"
    device: str
    dtype: str  # torch dtype, or the GGUF's weight type for llama.cpp
    threads: int
    version: str  # the runtime library's version
    extra: dict[str, object] = field(default_factory=dict)
