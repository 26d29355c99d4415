"""Offsets, lines and the checks every spec finder shares."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Literal

# block: a comment inside a function's body, asking for the code that goes below it
SpecKind = Literal["docstring", "comment", "block"]

SCAN_LINES = 400  # how far (in lines) the detector looks from the cursor
MAX_SPEC_CHARS = 20_000  # a docstring longer than this is treated as unclosed
HEADER_LINES = 40  # the most lines one function header may span
CANDIDATES = 3  # function headers above the cursor tried, nearest first


@dataclass(frozen=True)
class Found:
    """A spec candidate before the writability check."""

    kind: SpecKind
    start: int
    end: int  # just past the spec as typed
    text_end: int  # the request's document text ends here
    closing: str  # what closes the spec in the request
    insert_at: int  # what the document lacks, then the answer, go after this offset
    rest: str  # what the document lacks there to close the spec ('' when it is closed)
    def_indent: int  # indentation of the function header
    block_indent: int | None = None  # a block's: its comment's indentation

    @classmethod
    def closed(
        cls, text: str, kind: SpecKind, start: int, end: int, text_end: int, def_indent: int
    ) -> Found:
        """A spec the document closes already."""
        return cls(kind, start, end, text_end, "", line_end(text, text_end), "", def_indent)

    @classmethod
    def block(cls, text: str, start: int, end: int, def_indent: int, indent: int) -> Found:
        """A comment inside a body (text[start:end]) asking for the code below it."""
        insert_at = line_end(text, end)
        return cls("block", start, end, end, "", insert_at, "", def_indent, indent)


def line_start(text: str, offset: int) -> int:
    return text.rfind("\n", 0, offset) + 1


def line_end(text: str, offset: int) -> int:
    end = text.find("\n", offset)
    return len(text) if end < 0 else end


def lines_down(text: str, start: int, limit: int = SCAN_LINES) -> Iterator[tuple[int, int]]:
    """(start, end) of the lines from the one at `start` down, at most `limit` of them."""
    pos = line_start(text, start)
    for _ in range(limit):
        end = line_end(text, pos)
        yield pos, end
        if end >= len(text):
            return
        pos = end + 1


def lines_up(text: str, start: int, limit: int = SCAN_LINES) -> Iterator[tuple[int, int]]:
    """(start, end) of the lines from the one at `start` up, at most `limit` of them."""
    pos = line_start(text, start)
    for _ in range(limit):
        yield pos, line_end(text, pos)
        if pos == 0:
            return
        pos = line_start(text, pos - 1)


def indent_of(line: str) -> int:
    stripped = line.lstrip(" \t")
    return len(line[: len(line) - len(stripped)].expandtabs(4))


def is_blank(line: str) -> bool:
    return not line.strip()


def rstrip_at(text: str, start: int, end: int) -> int:
    """`end` moved left over trailing whitespace, not past `start`."""
    while end > start and text[end - 1].isspace():
        end -= 1
    return end


def tail(text: str, limit: int) -> str:
    """The last `limit` characters of text, starting at a line boundary when cut."""
    if len(text) <= limit:
        return text
    cut = text.find("\n", len(text) - limit)
    return text[cut + 1 :] if cut >= 0 else text[len(text) - limit :]


def head(text: str, limit: int) -> str:
    """The first `limit` characters of text, ending at a line boundary when cut."""
    if len(text) <= limit:
        return text
    cut = text.rfind("\n", 0, limit)
    return text[: cut + 1] if cut >= 0 else text[:limit]


def writable(text: str, found: Found, cursor: int) -> int | None:
    """Where the suffix starts if the cursor may write here, else None.

    Below the spec there may be blank lines and the cursor's own line with what was typed of
    the body; any other line still inside the function means the body exists already.
    """
    if cursor < found.start:
        return None
    insert_at = found.insert_at
    cursor_ok = cursor <= insert_at
    if insert_at >= len(text):
        return len(text) if cursor_ok else None
    for start, end in lines_down(text, insert_at + 1):
        line = text[start:end]
        if not is_blank(line) and indent_of(line) <= found.def_indent:
            return start if cursor_ok and cursor < start else None
        on_cursor = start <= cursor <= end
        if on_cursor:
            cursor_ok = True
        elif not is_blank(line):
            return None
        if end >= len(text):
            return len(text) if cursor_ok else None
    return None


def block_suffix(text: str, found: Found, cursor: int) -> int | None:
    """Where the code below a comment in a body starts if the cursor may write its block, else
    None: the cursor is on the comment or on a blank line between it and that code."""
    if cursor < found.start:
        return None
    for start, end in lines_down(text, found.insert_at + 1):
        if not is_blank(text[start:end]):
            return start if cursor < start else None
        if end >= len(text):
            return len(text)
    return None


def function_end(text: str, start: int, def_indent: int, language: str) -> int:
    """Where the function whose body holds the line at `start` ends: the start of its first
    line indented `def_indent` or less, or (a brace language) past that line, its `}`."""
    for line_from, line_to in lines_down(text, start, limit=SCAN_LINES * 4):
        line = text[line_from:line_to]
        if not is_blank(line) and indent_of(line) <= def_indent:
            closes = language == "brace" and line.lstrip().startswith("}")
            return min(line_to + 1, len(text)) if closes else line_from
        if line_to >= len(text):
            return len(text)
    return len(text)


def comment_at(
    text: str, cursor: int, is_comment: Callable[[str], bool]
) -> tuple[int, int, int] | None:
    """(first line start, last line end, indentation) of the comment block the cursor is on, or
    that the blank lines the cursor is on follow; lines of one block share their indentation."""
    here = line_start(text, cursor)
    for start, end in lines_up(text, here):
        line = text[start:end]
        if is_blank(line):
            continue
        if not is_comment(line):
            return None
        here = start
        break
    else:
        return None
    indent = indent_of(text[here : line_end(text, here)])
    same = lambda line: is_comment(line) and indent_of(line) == indent  # noqa: E731
    first = here
    for start, end in lines_up(text, here):
        if not same(text[start:end]):
            break
        first = start
    last_end = line_end(text, here)
    for start, end in lines_down(text, here):
        if not same(text[start:end]):
            break
        last_end = end
    return first, last_end, indent


def comment_in_body(
    text: str,
    cursor: int,
    is_comment: Callable[[str], bool],
    is_header: Callable[[int, int], bool],
    passes: Callable[[str], bool],
) -> Found | None:
    """A comment block inside a function's body, the cursor on it or on a blank line below it
    (see `comment_at` and `enclosing_header`), as a block spec."""
    comment = comment_at(text, cursor, is_comment)
    if comment is None:
        return None
    first, last_end, indent = comment
    def_indent = enclosing_header(text, first, indent, is_header, passes)
    if def_indent is None:
        return None
    return Found.block(text, first, rstrip_at(text, first, last_end), def_indent, indent)


def enclosing_header(
    text: str,
    first: int,
    indent: int,
    is_header: Callable[[int, int], bool],
    passes: Callable[[str], bool],
) -> int | None:
    """Indentation of the function whose body holds the line at `first` (indented `indent`),
    or None where the line is outside any function.

    Going up, each line indented less than all below it opens a block: a function header ends
    the search, any other (a loop, a class, the module) moves the floor out. Lines for which
    `passes` is true (comments, a header's continuation, a lone brace) do not count.
    """
    floor = indent
    for start, end in lines_up(text, first):
        line = text[start:end]
        if start == first or is_blank(line) or passes(line) or indent_of(line) >= floor:
            continue
        if is_header(start, end):
            return indent_of(line)
        floor = indent_of(line)
        if floor == 0:
            return None
    return None


def crosses_code(text: str, start: int, end: int, def_indent: int, code: re.Pattern) -> bool:
    """True when a line strictly after `start`'s line up to `end` leaves the function body."""
    first = line_end(text, start) + 1
    if first > end:
        return False
    for start_, end_ in lines_down(text, first, limit=SCAN_LINES * 4):
        if start_ > end:
            return False
        line = text[start_ : min(end_, end)]
        if not is_blank(line) and (indent_of(line) <= def_indent or code.match(line)):
            return True
        if end_ >= len(text):
            return False
    return True


def close_unclosed(
    text: str,
    kind: SpecKind,
    start: int,
    content: int,
    cursor: int,
    closers: tuple[str, str, str],
    def_indent: int,
) -> Found:
    """A spec still being typed, which runs to the end of the cursor's line.

    `closers` are the delimiter, the request's closing on the same line and on a line of its
    own. A delimiter being typed (`"` or `""` of a triple quote, `*` of `*/`) is left out, so
    the request stays the same while it is typed. The closing goes on its own line once the
    spec spans lines or a line was opened for it, as the finished text will have it.
    """
    delimiter, inline, own_line = closers
    line_end_at = line_end(text, cursor)
    typed_end = rstrip_at(text, content, line_end_at)
    run = partial_closer(text, content, typed_end, delimiter)
    text_end = rstrip_at(text, content, typed_end - run)
    spans = "\n" in text[content:line_end_at] or text[content:text_end].endswith(delimiter[0])
    closing = own_line if spans else inline
    if run:
        rest = delimiter[run:]
    elif text_end < line_start(text, line_end_at):  # the cursor's line waits for the delimiter
        rest = delimiter
    else:
        rest = closing
    return Found(kind, start, typed_end, text_end, closing, line_end_at, rest, def_indent)


def partial_closer(text: str, start: int, end: int, delimiter: str) -> int:
    """How many leading characters of `delimiter` end text[start:end] (being typed), or 0.

    They count only after a space or punctuation, so that `"hi"` keeps its quote.
    """
    for run in range(len(delimiter) - 1, 0, -1):
        if end - run >= start and text[end - run : end] == delimiter[:run]:
            before = text[end - run - 1] if end - run > start else " "
            if not before.isalnum():
                return run
    return 0
