"""Acceptance rules: which leading draft tokens survive a verify pass, and what comes next.

Each rule gets `rows` [n + 1, V] (row i is the model's logits predicting proposal i; row n
predicts the token after all of them) and the `n` proposed tokens, and returns how many leading
proposals it keeps and the token that follows them (the correction or the bonus token).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import torch


def token_probabilities(rows: torch.Tensor, tokens: Sequence[int]) -> list[float]:
    """The probability the model gives each of `tokens`: row i's softmax at tokens[i]."""
    if not tokens:
        return []
    logits = rows[: len(tokens)].float()  # [n, V]
    index = torch.tensor(list(tokens), device=rows.device)[:, None]
    chosen = logits.gather(1, index)[:, 0]  # [n]
    return torch.exp(chosen - torch.logsumexp(logits, dim=-1)).tolist()  # type: ignore[no-any-return]


class AcceptanceRule(Protocol):
    """What the session needs from a rule."""

    name: str

    def choose(self, row: torch.Tensor) -> int:
        """The token the model writes given one row of logits [V]."""
        ...

    def accept(
        self, rows: torch.Tensor, proposals: Sequence[int], q: torch.Tensor | None = None
    ) -> tuple[int, int]:
        """(number of leading proposals kept, the token that follows them).

        `q` [n, V] is the distribution the proposals were drawn from (None: fixed tokens).
        """
        ...

    def propose(self, rows: torch.Tensor) -> tuple[list[int], torch.Tensor | None]:
        """Tokens drafted from a drafter's logits [k, V], and their distribution q if drawn."""
        ...


class ExactRule:
    """Keep a token while it is the model's greedy choice: the answer equals greedy decoding."""

    name = "exact"

    def choose(self, row: torch.Tensor) -> int:
        """Greedy choice."""
        return int(torch.argmax(row))

    def propose(self, rows: torch.Tensor) -> tuple[list[int], torch.Tensor | None]:
        """The drafter's greedy guesses."""
        return torch.argmax(rows, dim=-1).tolist(), None

    def accept(
        self, rows: torch.Tensor, proposals: Sequence[int], q: torch.Tensor | None = None
    ) -> tuple[int, int]:
        """Longest leading run equal to the argmax, then the argmax after it."""
        greedy = torch.argmax(rows, dim=-1).tolist()  # [n + 1]
        kept = 0
        while kept < len(proposals) and proposals[kept] == greedy[kept]:
            kept += 1
        return kept, greedy[kept]


class ThresholdRule(ExactRule):
    """The seed's rule: keep a token while the model gives it probability >= tau.

    Lossy: a kept token need not be the greedy choice. Regeneration is greedy.
    """

    name = "threshold"

    def __init__(self, tau: float):
        self.tau = tau

    def accept(
        self, rows: torch.Tensor, proposals: Sequence[int], q: torch.Tensor | None = None
    ) -> tuple[int, int]:
        """Longest leading run with p >= tau, then the greedy token after it."""
        n = len(proposals)
        if n == 0:
            return 0, self.choose(rows[0])
        p_draft = token_probabilities(rows, proposals)
        kept = 0
        while kept < n and p_draft[kept] >= self.tau:
            kept += 1
        return kept, self.choose(rows[kept])


class SampleRule:
    """Temperature sampling; proposals are verified by speculative rejection sampling.

    A proposal x drawn from q is kept with probability min(1, p(x) / q(x)); on rejection the
    next token is drawn from norm(max(p - q, 0)). The output is distributed exactly as p. A
    fixed proposal (the stale draft's) has q = one-hot at x: kept with probability p(x), and
    a rejection draws from p with x removed.
    """

    name = "sample"

    def __init__(self, temperature: float, seed: int):
        self.temperature = temperature
        self.generator = torch.Generator().manual_seed(seed)

    def probs(self, row: torch.Tensor) -> torch.Tensor:
        """The sampling distribution p for one row of logits [V] (float64 on the CPU)."""
        return torch.softmax(row.double().cpu() / self.temperature, dim=-1)

    def choose(self, row: torch.Tensor) -> int:
        """Draw one token from p."""
        return int(torch.multinomial(self.probs(row), 1, generator=self.generator))

    def propose(self, rows: torch.Tensor) -> tuple[list[int], torch.Tensor | None]:
        """Draw one token per row from the drafter's tempered distribution q [k, V]."""
        q = self.probs(rows)
        return torch.multinomial(q, 1, generator=self.generator)[:, 0].tolist(), q

    def accept(
        self, rows: torch.Tensor, proposals: Sequence[int], q: torch.Tensor | None = None
    ) -> tuple[int, int]:
        """Keep x with probability min(1, p(x)/q(x)); on rejection draw from norm(max(p - q, 0))."""
        for i, token in enumerate(proposals):
            p = self.probs(rows[i])
            q_i = torch.zeros_like(p) if q is None else q[i].to(p)
            if q is None:
                q_i[token] = 1.0
            ratio = float(p[token] / q_i[token]) if q_i[token] > 0 else 1.0
            if float(torch.rand((), generator=self.generator, dtype=torch.float64)) < ratio:
                continue
            residual = torch.clamp(p - q_i, min=0.0)
            residual = residual if float(residual.sum()) > 0 else p
            return i, int(torch.multinomial(residual / residual.sum(), 1, generator=self.generator))
        return len(proposals), self.choose(rows[len(proposals)])


def make_rule(name: str, *, threshold: float, temperature: float, seed: int) -> AcceptanceRule:
    """The rule called `name` with its parameters."""
    if name == "exact":
        return ExactRule()
    if name == "threshold":
        return ThresholdRule(threshold)
    if name == "sample":
        return SampleRule(temperature, seed)
    raise ValueError(f"unknown acceptance rule {name!r}")


def lookahead_rule(rule: AcceptanceRule) -> AcceptanceRule:
    """The rule that checks stale-draft lookahead proposals: greedy unless sampling.

    Threshold mode regenerates greedily, so its lookahead must not loosen that.
    """
    return ExactRule() if isinstance(rule, ThresholdRule) else rule
