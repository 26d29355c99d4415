"""A body a person wrote, checked against its changed spec: keep what holds, rewrite the rest.

The person's lines are proposals, verified under a threshold rule: their code is rarely the
model's argmax (exact agreement would rewrite it all), and often not even probable (a name
the model would not choose). So where the spec as it was before the change is known, each
proposal is scored under both specs, after the same lines: a token stays while the new spec
gives it at least `ratio` times what the old one gives it. Only what the change made clearly
less likely fails, however likely or unlikely it was (a line the new spec wants something put
before loses most of its first token's probability; a name the model would not have chosen
loses nothing). Where the old spec is not known, a token stays while the model gives it at
least `threshold`. A line stays when all its tokens do. At the first line that fails, the
model writes its own lines greedily; after each one the person's remaining lines are proposed
again (from the line the model just restated, or skipped), so only the lines the new spec
contradicts are rewritten and the rest comes back. What the model adds after the person's last
line stays only when the change asks for it: the old spec gives one of its tokens less than
`ratio` of what the new one gives (else the old spec would have added it too, and the person's
end stands).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import torch

from inference.engine.acceptance import token_probabilities
from inference.engine.kvcache import KVState, Steps
from inference.engine.stopping import StopRule

RESUME_WINDOW = 8  # person's lines looked ahead for the one the model restated


@dataclass(frozen=True)
class Realigned:
    """The rewritten body's tokens and how many of the person's lines were kept."""

    tokens: list[int]
    kept_lines: int
    ended: bool = True  # False: the person's body, whose end the stop rule did not see


def realign(
    kv: KVState,
    prompt_ids: Sequence[int],
    lines: Sequence[Sequence[int]],
    texts: Sequence[str],
    stop: StopRule,
    check: Callable[[], None],
    rule: Contrast,
) -> Steps[Realigned]:
    """The body `prompt_ids` asks for, keeping the person's `lines` (token ids per line, with
    their text in `texts`) where `rule` accepts them. A generator of forwards (kvcache.py);
    `check` is called before each and raises to abandon the work."""
    prompt = list(prompt_ids)
    tokens: list[int] = []
    state = stop.start
    at = kept = 0  # the next person's line; lines kept

    def append(token: int) -> bool:
        nonlocal state
        tokens.append(token)
        state, done = stop.advance(state, token, len(tokens))
        return done

    while True:
        proposals = [token for line in lines[at:] for token in line]
        check()
        rows, _ = yield from kv.score(prompt + tokens, proposals)  # [len(proposals) + 1, V]
        floors = yield from rule.floors(tokens, proposals, check)
        probabilities = token_probabilities(rows, proposals)
        whole = used = 0
        for line in lines[at:]:
            span = slice(used, used + len(line))
            if any(p < f for p, f in zip(probabilities[span], floors[span], strict=True)):
                break
            whole, used = whole + 1, used + len(line)
        for token in proposals[:used]:
            if append(token):
                return Realigned(tokens, kept + whole)
        at, kept = at + whole, kept + whole
        kv.truncate(len(prompt) + len(tokens), tail=rows[used])
        row = rows[used]
        start = len(tokens)
        written: list[float] = []  # the probability of each token the model writes
        while True:  # the model's next line (all the rest once the person's lines are used)
            token = int(torch.argmax(row))
            written += token_probabilities(row[None], [token])
            done = append(token)
            line_ended = at < len(lines) and "\n" in stop.piece(token)
            if done or (line_ended and complete(stop.decode(tokens[start:]))):
                break
            check()
            rows, _ = yield from kv.feed([token])
            row = rows[-1]
        if at == len(lines):  # what the model adds after the person's last line
            caused = yield from rule.caused(tokens[:start], tokens[start:], written, check)
            if not caused:  # the old spec would add it too: the change does not ask for it
                return Realigned(tokens[:start], kept, ended=False)
        if done:
            return Realigned(tokens, kept)
        at = resume_at(texts, at, stop.decode(tokens[start:]))


class Contrast:
    """The least probability each proposed token needs: `ratio` times what the spec before the
    change gives it after the same tokens (scored in `old`, a cache of its own), or
    `threshold` where that spec is not known (`old` None)."""

    def __init__(
        self, old: KVState | None, old_prompt: Sequence[int], ratio: float, threshold: float
    ):
        self.old, self.old_prompt = old, list(old_prompt)
        self.ratio, self.threshold = ratio, threshold

    def floors(
        self, tokens: Sequence[int], proposals: Sequence[int], check: Callable[[], None]
    ) -> Steps[list[float]]:
        """One floor per proposal, after the answer's `tokens` so far."""
        if self.old is None:
            return [self.threshold] * len(proposals)
        check()
        rows, _ = yield from self.old.score(self.old_prompt + list(tokens), proposals)
        return [self.ratio * p for p in token_probabilities(rows, proposals)]

    def caused(
        self,
        tokens: Sequence[int],
        added: Sequence[int],
        probabilities: Sequence[float],
        check: Callable[[], None],
    ) -> Steps[bool]:
        """True when the change asks for `added` (the model's tokens after `tokens`, which the
        new spec gives `probabilities`): the old spec gives one of them less than `ratio` of
        that. Unknown old spec: True."""
        if self.old is None or not added:
            return True
        check()
        rows, _ = yield from self.old.score(self.old_prompt + list(tokens), added)
        had = token_probabilities(rows, added)
        return any(old < self.ratio * new for old, new in zip(had, probabilities, strict=True))


_STRINGS = re.compile(r"'(?:\\.|[^'\\\n])*'|\"(?:\\.|[^\"\\\n])*\"|`[^`]*`")
_OPEN_ENDS = (":", "{", "(", "[", ",", "\\", "=>", "=")


def complete(written: str) -> bool:
    """True when the model's lines `written` can be followed by a person's line: their brackets
    close and the last one opens no block or continuation (`if x:`, `{`, a trailing comma)."""
    code = _STRINGS.sub('""', written)
    depth = sum(code.count(c) for c in "([{") - sum(code.count(c) for c in ")]}")
    last = next((line for line in reversed(code.split("\n")) if line.strip()), "")
    last = last.split("#", 1)[0].split("//", 1)[0].rstrip()
    return depth <= 0 and not last.endswith(_OPEN_ENDS)


def resume_at(texts: Sequence[str], at: int, written: str) -> int:
    """The person's line to propose after the model wrote `written` in place of line `at`:
    past the line it restated (the ones before it were dropped), else `at` (an insertion)."""
    line = written.strip()
    if not line:
        return at
    for k in range(at, min(at + RESUME_WINDOW, len(texts))):
        if texts[k].strip() == line:
            return k + 1
    return at
