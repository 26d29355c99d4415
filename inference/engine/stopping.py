"""Where an answer ends: end of the function body, end-of-sequence, stop strings, budget.

The rule is a function of the answer's tokens alone, checked token by token, so plain decoding
and streaming apply it at the same points and stop at the same token.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from inference.api import FinishReason, Language


@dataclass(frozen=True)
class ScanState:
    """Where the scanner stands in the answer text."""

    chars: int = 0  # characters of answer text scanned so far
    indent: int = 0  # leading whitespace columns on the current line
    line_has_content: bool = False
    tail: str = ""  # last characters, for stop strings


@dataclass(frozen=True)
class BodyEnd:
    """The text-level part of the stop rule for one request."""

    language: Language
    def_indent: int | None  # indentation of the `def`/function line; None: no body rule
    stop_strings: tuple[str, ...] = ()
    keep_closing: bool = True  # a brace language's `}` that ends the body belongs to the answer

    def initial_state(self, prompt_text: str) -> ScanState:
        """The scan state at the start of the answer: the prompt's unfinished last line."""
        last_line = prompt_text.rsplit("\n", 1)[-1]
        stripped = last_line.lstrip(" \t")
        return ScanState(indent=len(last_line) - len(stripped), line_has_content=bool(stripped))

    def scan(self, state: ScanState, text: str) -> tuple[ScanState, int | None]:
        """Advance over `text`; return the new state and the cut offset if the body ended."""
        chars, indent, has_content, tail = (
            state.chars, state.indent, state.line_has_content, state.tail,
        )  # fmt: skip
        longest = max((len(s) for s in self.stop_strings), default=0)
        for ch in text:
            chars += 1
            if longest:
                tail = (tail + ch)[-longest:]
                for stop in self.stop_strings:
                    if tail.endswith(stop):
                        return state, chars - len(stop)
            if ch == "\n":
                indent, has_content = 0, False
            elif not has_content and ch in " \t":
                indent += 1
            elif not has_content:
                has_content = True
                cut = self._line_start_cut(ch, indent, chars)
                if cut is not None:
                    return state, cut
        new_state = ScanState(chars=chars, indent=indent, line_has_content=has_content, tail=tail)
        return new_state, None

    def _line_start_cut(self, ch: str, indent: int, chars: int) -> int | None:
        """Cut offset when a line starting with `ch` at `indent` ends the body, else None."""
        if self.def_indent is None or indent > self.def_indent:
            return None
        if self.language == "brace" and ch != "}":
            return None
        if self.language == "brace" and self.keep_closing:
            return chars  # keep the closing brace
        return chars - 1 - indent  # drop the dedented line


class StopRule:
    """The whole stop rule: EOS tokens, the token budget and the body-end text rule."""

    def __init__(
        self,
        body_end: BodyEnd,
        prompt_text: str,
        piece: Callable[[int], str],
        decode: Callable[[Sequence[int]], str],
        eos_ids: frozenset[int],
        max_tokens: int,
    ):
        self.body_end = body_end
        self.start = body_end.initial_state(prompt_text)
        self.piece = piece  # token id -> its text, used to scan token by token
        self.decode = decode  # token ids -> text, used for the final answer
        self.eos_ids = eos_ids
        self.max_tokens = max_tokens

    def advance(self, state: ScanState, token: int, count: int) -> tuple[ScanState, bool]:
        """Scan the `count`-th answer token; True when the answer ends with it."""
        if token in self.eos_ids:
            return state, True
        state, cut = self.body_end.scan(state, self.piece(token))
        return state, cut is not None or count >= self.max_tokens

    def scan(self, tokens: Sequence[int]) -> tuple[ScanState, int | None]:
        """Scan state after `tokens`, and the smallest k such that tokens[:k] is finished."""
        state = self.start
        for k, token in enumerate(tokens, start=1):
            state, done = self.advance(state, token, k)
            if done:
                return state, k
        return state, None

    def answer(self, tokens: Sequence[int]) -> tuple[str, FinishReason]:
        """The answer text for finished (or partial) tokens, and why it ended."""
        if tokens and tokens[-1] in self.eos_ids:
            return self._cut(self.decode(tokens[:-1]))[0], "eos"
        text, cut = self._cut(self.decode(tokens))
        if cut:
            return text, "stop"
        if len(tokens) >= self.max_tokens:
            return text, "length"
        return text, "unfinished"

    def _cut(self, text: str) -> tuple[str, bool]:
        _, cut = self.body_end.scan(self.start, text)
        if cut is None:
            return text, False
        ending = "\n" if self.body_end.language == "python" else ""
        return text[:cut].rstrip(" \t\n") + ending, True
