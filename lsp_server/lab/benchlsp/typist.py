"""A person typing a spec: the keystrokes an editor sends, with human timing.

Each keystroke is one incremental change. Enter brings the line's indentation with it (editors
auto-indent). In an auto-closing session (VS Code's default), typing the third opening quote
also inserts the closing quotes after the cursor; at the end the cursor jumps past them. Else
the closing quotes are typed last. A brace-language spec is `//` comment lines, each begun by
typing `// `, then Enter opens the line the body starts on. Timing: `cps` characters a second
with log-normal jitter; the `thinking` typist also pauses longer after a word, longer still
after a sentence and at a line break, the `steady` one does not (the harder case: nothing ends
before the last word).
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, get_args

if TYPE_CHECKING:  # the server's command line imports this module for PROFILES: keep it light
    from lsp_server.lab.benchlsp.sessions import Session

QUOTES = '"""'
LINE_COMMENT = "// "
PYTHON_COMMENT = "# "
_JITTER = 0.35  # sigma of the log-normal factor on each interval
_SENTENCE_ENDS = ".!?:"
Profile = Literal["steady", "thinking"]
PROFILES: tuple[Profile, ...] = get_args(Profile)


@dataclass(frozen=True)
class Keystroke:
    """Wait `delay_s`, then insert `text` at `offset`; the cursor ends at `cursor`."""

    delay_s: float
    offset: int
    text: str
    cursor: int


@dataclass(frozen=True)
class Typing:
    """What a typist sends for one session, and where the first body line starts."""

    initial: str  # the document when the session opens
    keystrokes: tuple[Keystroke, ...]
    final: str  # the document after the last keystroke
    body_offset: int  # the cursor at the trigger: the first body line, indented
    warm: str  # the document before the docstring's last character: what a cache could hold
    warm_cursor: int  # the cursor in `warm`

    @property
    def typing_s(self) -> float:
        """Seconds from the first keystroke to the last."""
        return sum(k.delay_s for k in self.keystrokes)


class Typist:
    """Turns sessions into keystrokes at `cps` with a profile's pauses, reproducibly by seed."""

    def __init__(self, cps: float, seed: int = 0, profile: Profile = "thinking"):
        self.cps = cps
        self.profile = profile
        self.rng = random.Random(seed)

    def type(self, session: Session, autoclose: bool) -> Typing:
        """The keystrokes that write `session`'s spec and open its body."""
        editor = _Editor(self, session.above + session.below, len(session.above))
        newline = "\n" + session.indent
        if session.language != "python" or session.kind == "comment":  # comment lines, Enter
            prefix = PYTHON_COMMENT if session.language == "python" else LINE_COMMENT
            for number, line in enumerate(session.docstring.split("\n")):
                editor.type([newline] if number else [])
                editor.type([*prefix, *line[:-1]])
                editor.remember_warm()
                editor.type([line[-1:]] if line else [])
            editor.type([newline])
            return editor.typing()
        pieces = _pieces(session.docstring)
        editor.type(QUOTES[:-1])
        editor.type([QUOTES[-1]], extra=QUOTES if autoclose else "")
        editor.type(pieces[:-1])
        editor.remember_warm()
        editor.type(pieces[-1:])
        if autoclose:
            editor.cursor += len(QUOTES)  # End: past the closing quotes the editor inserted
            editor.type([newline])
        else:
            editor.type([newline, *QUOTES, newline])
        return editor.typing()

    def insert(self, text: str, at: int, typed: str) -> Typing:
        """The keystrokes that type `typed` into `text` at offset `at` (a line break with the
        indentation after it is one keystroke, as an editor auto-indents)."""
        editor = _Editor(self, text, at)
        pieces = _pieces(typed)
        editor.type(pieces[:-1])
        editor.remember_warm()
        editor.type(pieces[-1:])
        return editor.typing()

    def _delay(self, previous: str, piece: str) -> float:
        """Seconds before `piece` after `previous`: jittered; when thinking, longer at word and
        sentence ends."""
        base = 1.0 / self.cps
        # exp(N(-s^2/2, s)) has mean 1: the average pace stays `cps`
        delay = base * math.exp(self.rng.gauss(-_JITTER**2 / 2, _JITTER))
        if self.profile == "steady":
            return delay
        word_ended = previous == " "
        sentence_ended = previous[-1:] in _SENTENCE_ENDS and piece == " "
        if word_ended:
            delay += base * self.rng.uniform(0.5, 1.5)
        if sentence_ended or previous.startswith("\n"):  # a new thought
            delay += self.rng.uniform(0.3, 1.0)
        if piece.startswith("\n"):
            delay += self.rng.uniform(0.2, 0.6)
        return delay


class _Editor:
    """The document as the keystrokes change it, and the keystrokes so far."""

    def __init__(self, typist: Typist, text: str, cursor: int):
        self.typist, self.text, self.cursor = typist, text, cursor
        self.initial, self.previous = text, ""
        self.strokes: list[Keystroke] = []
        self.warm, self.warm_cursor = text, cursor

    def type(self, pieces: Sequence[str], extra: str = "") -> None:
        """Type each piece at the cursor; `extra` is what the editor adds after the cursor."""
        for piece in pieces:
            delay = self.typist._delay(self.previous, piece)
            end = self.cursor + len(piece)
            self.strokes.append(Keystroke(delay, self.cursor, piece + extra, end))
            self.text = self.text[: self.cursor] + piece + extra + self.text[self.cursor :]
            self.cursor, self.previous = end, piece

    def remember_warm(self) -> None:
        """The document now is the one before the spec's last character."""
        self.warm, self.warm_cursor = self.text, self.cursor

    def typing(self) -> Typing:
        return Typing(self.initial, tuple(self.strokes), self.text, self.cursor, self.warm,
                      self.warm_cursor)  # fmt: skip


def _pieces(docstring: str) -> list[str]:
    """The docstring as keystrokes: one character each, a line break with its indentation one."""
    pieces: list[str] = []
    i = 0
    while i < len(docstring):
        if docstring[i] == "\n":
            end = i + 1
            while end < len(docstring) and docstring[end] in " \t":
                end += 1
            pieces.append(docstring[i:end])
            i = end
        else:
            pieces.append(docstring[i])
            i += 1
    return pieces
