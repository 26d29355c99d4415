"""Python specs: a function's docstring (closed or still open), `#` comments above or at the
start of it, and `#` comments inside its body that ask for the block below them."""

from __future__ import annotations

import re
from collections.abc import Iterator

from lsp_server.spec.text import (
    CANDIDATES,
    HEADER_LINES,
    MAX_SPEC_CHARS,
    Found,
    close_unclosed,
    comment_in_body,
    crosses_code,
    indent_of,
    is_blank,
    line_end,
    line_start,
    lines_down,
    lines_up,
    rstrip_at,
)

_PY_DEF = re.compile(r"^([ \t]*)(?:async[ \t]+)?def[ \t]+\w+")
_PY_CODE_START = re.compile(r"^[ \t]*(?:(?:async[ \t]+)?def|class)[ \t]+\w+")
_PY_DOCSTRING = re.compile(r"(?P<prefix>[rRuU]?)(?P<quote>\"\"\"|'''|\"|')")
_PY_STRINGS = re.compile(r"'(?:\\.|[^'\\])*'|\"(?:\\.|[^\"\\])*\"")


class PythonFinder:
    """Docstrings and `#` comment blocks of Python functions."""

    def __init__(self, text: str, cursor: int):
        self.text = text
        self.cursor = cursor

    def candidates(self) -> Iterator[Found]:
        line = self._line(self.cursor)
        if line.lstrip().startswith("#"):
            above = self._comment_above(line_start(self.text, self.cursor))
            if above:
                yield above
        headers = 0
        for start, end in lines_up(self.text, self.cursor):
            if _PY_DEF.match(self.text[start:end]):
                found = self._body_spec(start)
                if found:
                    yield found
                headers += 1
                if headers == CANDIDATES:
                    break
        block = self._comment_in_body()
        if block:
            yield block

    def _comment_in_body(self) -> Found | None:
        """A `#` block inside a function's body, the cursor on it or on a blank line below."""
        text = self.text
        return comment_in_body(
            text,
            self.cursor,
            lambda line: line.lstrip().startswith("#"),
            lambda start, end: bool(_PY_DEF.match(text[start:end])),
            lambda line: line.lstrip().startswith(("#", ")", "]", "}")),
        )

    def _line(self, offset: int) -> str:
        return self.text[line_start(self.text, offset) : line_end(self.text, offset)]

    def _comment_above(self, here: int) -> Found | None:
        """A `#` block whose next line (after decorators) is a def at the same indentation."""
        text, indent = self.text, indent_of(self._line(here))
        first = here
        for start, end in lines_up(text, here):
            if not self._is_comment(text[start:end], indent):
                break
            first = start
        last_end = None
        for start, end in lines_down(text, here):
            line = text[start:end]
            if self._is_comment(line, indent):
                last_end = end
                continue
            if line.lstrip().startswith("@") and indent_of(line) == indent:
                continue
            if _PY_DEF.match(line) and indent_of(line) == indent and last_end is not None:
                header_end = self._header_end(start)
                if header_end is None:
                    return None
                block_end = rstrip_at(text, first, last_end)
                text_end = rstrip_at(text, start, header_end)
                return Found.closed(text, "comment", first, block_end, text_end, indent)
            return None
        return None

    @staticmethod
    def _is_comment(line: str, indent: int) -> bool:
        return line.lstrip().startswith("#") and indent_of(line) == indent

    def _header_end(self, def_start: int) -> int | None:
        """End of the line that closes a (possibly multi-line) def header with its colon."""
        depth = 0
        for start, end in lines_down(self.text, def_start, HEADER_LINES):
            code = _PY_STRINGS.sub('""', self.text[start:end]).split("#", 1)[0]
            depth += sum(code.count(c) for c in "([{") - sum(code.count(c) for c in ")]}")
            if depth <= 0:
                return end if code.rstrip().endswith(":") else None
        return None

    def _body_spec(self, def_start: int) -> Found | None:
        """The docstring or leading comment block of the def starting at `def_start`."""
        text = self.text
        def_indent = indent_of(self._line(def_start))
        header_end = self._header_end(def_start)
        if header_end is None or header_end >= len(text):
            return None
        for start, end in lines_down(text, header_end + 1):
            line = text[start:end]
            if is_blank(line):
                continue
            if indent_of(line) <= def_indent:
                return None
            stripped = line.lstrip(" \t")
            at = start + len(line) - len(stripped)
            if stripped.startswith("#"):
                return self._leading_comments(start, def_indent)
            match = _PY_DOCSTRING.match(stripped)
            if match is None:
                return None
            return self._docstring(at + len(match["prefix"]), match["quote"], def_indent)
        return None

    def _leading_comments(self, first: int, def_indent: int) -> Found:
        text, indent = self.text, indent_of(self._line(first))
        last_end = line_end(text, first)
        for start, end in lines_down(text, first):
            if not self._is_comment(text[start:end], indent):
                break
            last_end = end
        block_end = rstrip_at(text, first, last_end)
        return Found.closed(text, "comment", first, block_end, block_end, def_indent)

    def _docstring(self, open_at: int, quote: str, def_indent: int) -> Found | None:
        text = self.text
        start = line_start(text, open_at)
        content = open_at + len(quote)
        limit = line_end(text, content) if len(quote) == 1 else content + MAX_SPEC_CHARS
        close = text.find(quote, content, limit)
        if close >= 0 and not crosses_code(text, open_at, close, def_indent, _PY_CODE_START):
            end = close + len(quote)
            return Found.closed(text, "docstring", start, end, end, def_indent)
        # Unclosed: the spec runs to the end of the cursor's line, which must lie inside it.
        if self.cursor < content:
            return None
        if len(quote) == 1 and line_start(text, self.cursor) != start:
            return None
        cursor_end = line_end(text, self.cursor)
        if crosses_code(text, open_at, cursor_end, def_indent, _PY_CODE_START):
            return None
        lead = text[start:open_at]
        indent = lead[: len(lead) - len(lead.lstrip(" \t"))]
        # A one-quote docstring cannot span lines: it closes on the same line.
        own_line = f"\n{indent}{quote}" if len(quote) == 3 else quote
        closers = (quote, quote, own_line)
        return close_unclosed(text, "docstring", start, content, self.cursor, closers, def_indent)
