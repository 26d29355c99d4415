"""Docstring segmentation: a prompt's spec cut into the units a programmer types one by one.

A unit is a prose sentence, a doctest example (the `>>>` line, its `...` continuations and
its expected output) or a one-line call example such as `f(1) ==> 2`. Units keep the
whitespace in front of them, so joining them gives back the docstring exactly.
"""

from __future__ import annotations

import io
import re
import tokenize
from dataclasses import dataclass
from typing import Literal

UnitKind = Literal["prose", "example"]

# Words ending in a period that do not end a sentence (compared lowercased, brackets stripped).
ABBREVIATIONS = frozenset(
    {"e.g.", "i.e.", "eg.", "ie.", "cf.", "vs.", "approx.", "resp.", "no.", "fig.", "mr.",
     "mrs.", "ms.", "dr.", "st."}
)  # fmt: skip
_SENTENCE_END = re.compile(r"[.!?]+[\"')\]]*(?=\s)")
_DOCTEST = re.compile(r"\s*>>>")
_BULLET = re.compile(r"\s*(?:[-*+\u2022]|\d{1,2}[.)])\s")
# `name(args) ==> result` and its spellings (=>, ->, ==, =, arrows) on one line.
_CALL_EXAMPLE = re.compile(r"\s*[A-Za-z_][\w.]*\(.*\)\s*(?:==>|=>|->|==|=|\u279e|\u2192)")
_ENUMERATOR = re.compile(r"(?:\d{1,2}|[A-Za-z])[.)]")


@dataclass(frozen=True)
class Unit:
    """One piece of the spec as it arrives: its text (with the whitespace before it)."""

    text: str
    kind: UnitKind


@dataclass(frozen=True)
class SplitPrompt:
    """A prompt whose last docstring is cut into units, ready to be replayed cumulatively."""

    head: str  # the prompt up to and including the docstring's opening quotes
    units: tuple[Unit, ...]
    closing: str  # newline, indentation, closing quotes and a newline: the body starts after

    def prompt(self, typed: int) -> str:
        """The prompt with the first `typed` units written and the docstring closed."""
        spec = "".join(unit.text for unit in self.units[:typed]).rstrip()
        return f"{self.head}{spec}{self.closing}"

    def prompts(self) -> list[str]:
        """The cumulative prompts, one per unit: prompt i holds units 1..i."""
        return [self.prompt(i) for i in range(1, len(self.units) + 1)]

    @property
    def streamable(self) -> bool:
        """True when there is something to stream: at least two units (the seed's rule)."""
        return len(self.units) >= 2


class DocstringNotFound(ValueError):  # noqa: N818 - reads as a condition of the prompt
    """The prompt does not end with a triple-quoted docstring."""


def split_prompt(prompt: str) -> SplitPrompt:
    """Locate the docstring that ends `prompt` and cut it into units."""
    start, end, token = _last_docstring(prompt)
    quote = token[-3:]
    opening = len(token) - len(token.lstrip("rRbBuU")) + 3  # string prefix and the quotes
    content = token[opening:-3]
    line_start = prompt.rfind("\n", 0, start) + 1
    indent = prompt[line_start:start]
    if indent.strip():  # the docstring shares its line with code: indent like that line
        indent = indent[: len(indent) - len(indent.lstrip())]
    units = tuple(split_docstring(content))
    return SplitPrompt(prompt[: start + opening], units, f"\n{indent}{quote}\n")


def split_docstring(text: str) -> list[Unit]:
    """Cut docstring text into units; joined, their texts give `text` without trailing space."""
    spans = [span for block in _blocks(text) for span in _units_of(text, block)]
    units = []
    for i, (begin, _, kind) in enumerate(spans):
        start = 0 if i == 0 else _after_text(text, begin)
        stop = _after_text(text, spans[i + 1][0]) if i + 1 < len(spans) else len(text.rstrip())
        units.append(Unit(text[start:stop], kind))
    return units


def _after_text(text: str, offset: int) -> int:
    """The offset just after the last non-space character before `offset`."""
    return len(text[:offset].rstrip())


def _last_docstring(prompt: str) -> tuple[int, int, str]:
    """Offsets and text of the triple-quoted string token that ends the prompt."""
    last = None
    try:
        for token in tokenize.generate_tokens(io.StringIO(prompt).readline):
            if token.type == tokenize.STRING:
                last = token
    except (tokenize.TokenError, SyntaxError) as exc:
        raise DocstringNotFound(f"the prompt does not tokenize: {exc}") from exc
    if last is None or not last.string.endswith(('"""', "'''")):
        raise DocstringNotFound("the prompt has no triple-quoted docstring")
    lines = prompt.splitlines(keepends=True)
    start = sum(len(line) for line in lines[: last.start[0] - 1]) + last.start[1]
    end = sum(len(line) for line in lines[: last.end[0] - 1]) + last.end[1]
    if prompt[end:].strip():
        raise DocstringNotFound("the prompt does not end with its docstring")
    return start, end, last.string


def _blocks(text: str) -> list[tuple[int, int, UnitKind]]:
    """Line blocks (start, end, kind): prose paragraphs and examples, blank lines between."""
    lines, offsets, at = text.splitlines(keepends=True), [], 0
    for line in lines:
        offsets.append(at)
        at += len(line)
    blocks: list[tuple[int, int, UnitKind]] = []
    i = 0
    while i < len(lines):
        if not lines[i].strip():
            i += 1
            continue
        kind, j = _block_end(lines, i)
        end = offsets[j - 1] + len(lines[j - 1].rstrip())
        begin = offsets[i] + len(lines[i]) - len(lines[i].lstrip())
        blocks.append((begin, end, kind))
        i = j
    return blocks


def _block_end(lines: list[str], i: int) -> tuple[UnitKind, int]:
    """The kind of the block starting at line i and the index of the line after it."""
    if _CALL_EXAMPLE.match(lines[i]):
        return "example", i + 1
    doctest = bool(_DOCTEST.match(lines[i]))
    j = i + 1
    while j < len(lines) and lines[j].strip() and not _starts_unit(lines[j], doctest):
        j += 1
    return ("example" if doctest else "prose"), j


def _starts_unit(line: str, in_doctest: bool) -> bool:
    """True when `line` starts a new block rather than continuing the current one."""
    if _DOCTEST.match(line):
        return True
    if in_doctest:  # doctest output runs until a blank line or the next `>>>`
        return False
    return bool(_BULLET.match(line) or _CALL_EXAMPLE.match(line))


def _units_of(text: str, block: tuple[int, int, UnitKind]) -> list[tuple[int, int, UnitKind]]:
    """An example block is one unit; a prose block is cut at its sentence ends."""
    begin, end, kind = block
    if kind == "example":
        return [block]
    cuts = [begin] + [
        begin + at for at in _sentence_ends(text[begin:end]) if begin + at < end
    ]
    return [
        (start, stop, "prose")
        for start, stop in zip(cuts, cuts[1:] + [end], strict=True)
        if text[start:stop].strip()
    ]


def _sentence_ends(prose: str) -> list[int]:
    """Offsets in `prose` where a new sentence begins (after the whitespace that follows)."""
    ends = []
    for match in _SENTENCE_END.finditer(prose):
        if _depth(prose[: match.start()]) > 0:
            continue  # inside brackets: code or an aside, not a sentence end
        word = prose[: match.end()].split()[-1]
        if _not_an_end(prose, match.end() - len(word), word):
            continue
        rest = prose[match.end() :]
        nxt = rest.lstrip()
        if not nxt:
            continue
        newline = "\n" in rest[: len(rest) - len(nxt)]
        if newline or not nxt[0].islower():
            ends.append(len(prose) - len(nxt))
    return ends


def _not_an_end(prose: str, start: int, word: str) -> bool:
    """An abbreviation, or a list enumerator (`1.`, `a)`) at the start of its line."""
    if word.lower().lstrip("([\"'") in ABBREVIATIONS:
        return True
    line_start = prose.rfind("\n", 0, start) + 1
    first_word = not prose[line_start:start].strip()
    return first_word and bool(_ENUMERATOR.fullmatch(word))


def _depth(text: str) -> int:
    """Bracket nesting at the end of `text`, never below zero."""
    depth = 0
    for ch in text:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth = max(0, depth - 1)
    return depth
