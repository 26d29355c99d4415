"""Brace-language specs: `//` and `/* */` comments above a function or at the start of its body,
and `//` (or one-line `/* */`) comments inside its body that ask for the block below them."""

from __future__ import annotations

import re
from collections.abc import Iterator

from lsp_server.spec.text import (
    CANDIDATES,
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

_BRACE_CONTROL = r"(?!(?:if|else|for|foreach|while|switch|catch|do|try|return|with|elif)\b)"
_BRACE_SIGNATURE = rf"^([ \t]*)(?=\S){_BRACE_CONTROL}[^;{{}}]*\([^;{{}}]*\)[^;{{}}]*"
_BRACE_HEADER = re.compile(_BRACE_SIGNATURE + r"\{\s*$")  # `name(args) {`
_BRACE_ALLMAN = re.compile(_BRACE_SIGNATURE + r"$")  # `name(args)`, then `{` on its own line
_BRACE_COMMENT = re.compile(r"^[ \t]*(?://|/\*|\*)")
_LINE_COMMENT = re.compile(r"^[ \t]*(?://|/\*.*\*/[ \t]*$)")  # `//`, or `/* */` on one line


class BraceFinder:
    """`//` and `/* */` comments above a function or at the start of its body."""

    def __init__(self, text: str, cursor: int):
        self.text = text
        self.cursor = cursor

    def candidates(self) -> Iterator[Found]:
        text = self.text
        here = line_start(text, self.cursor)
        if _BRACE_COMMENT.match(text[here : line_end(text, here)]):
            above = self._comment_above(here)
            if above:
                yield above
        headers = 0
        for start, end in lines_up(text, self.cursor):
            body = self._body_start(start, end)
            if body is None:
                continue
            found = self._body_spec(body, indent_of(text[start:end])) or self._comment_before(start)
            if found:
                yield found
            headers += 1
            if headers == CANDIDATES:
                break
        block = self._comment_in_body()
        if block:
            yield block

    def _comment_in_body(self) -> Found | None:
        """A `//` block inside a function's body, the cursor on it or on a blank line below."""
        return comment_in_body(
            self.text,
            self.cursor,
            lambda line: bool(_LINE_COMMENT.match(line)),
            lambda start, end: self._body_start(start, end) is not None,
            lambda line: bool(_BRACE_COMMENT.match(line)) or line.strip() == "{",
        )

    def _comment_before(self, header: int) -> Found | None:
        """The comment block right above a function header (annotations between skipped).

        So the cursor in the empty body of `/** spec */ function f() {` (where VS Code puts it
        after Enter) writes from the comment above.
        """
        if header == 0:
            return None
        for start, end in lines_up(self.text, header - 1):
            line = self.text[start:end]
            if line.lstrip().startswith("@"):
                continue
            if _BRACE_COMMENT.match(line) or line.rstrip().endswith("*/"):
                return self._comment_above(start)
            return None
        return None

    def _body_start(self, start: int, end: int) -> int | None:
        """End of the line holding the opening brace if a function header starts here."""
        line = self.text[start:end]
        if _BRACE_HEADER.match(line):
            return end
        if _BRACE_ALLMAN.match(line) and end < len(self.text):
            next_end = line_end(self.text, end + 1)
            if self.text[end + 1 : next_end].strip() == "{":
                return next_end
        return None

    def _comment_above(self, here: int) -> Found | None:
        """A comment block whose next line (after annotations) is a function header."""
        text = self.text
        first = here
        for start, end in lines_up(text, here):
            line = text[start:end]
            if not _BRACE_COMMENT.match(line):
                break
            first = start
            if line.lstrip().startswith("/*"):
                break
        last_end = None
        for start, end in lines_down(text, here):
            line = text[start:end]
            if _BRACE_COMMENT.match(line) or line.rstrip().endswith("*/"):
                last_end = end
                continue
            if line.lstrip().startswith("@"):
                continue
            body = self._body_start(start, end)
            if body is None or last_end is None:
                return None
            block = text[first:last_end]
            if "/*" in block and "*/" not in block[block.find("/*") :]:
                return None
            block_end = rstrip_at(text, first, last_end)
            text_end = rstrip_at(text, start, body)
            return Found.closed(text, "comment", first, block_end, text_end, indent_of(line))
        return None

    def _body_spec(self, brace_end: int, def_indent: int) -> Found | None:
        """The comment right after a function's opening brace."""
        text = self.text
        if brace_end >= len(text):
            return None
        for start, end in lines_down(text, brace_end + 1):
            line = text[start:end]
            if is_blank(line):
                continue
            if indent_of(line) <= def_indent:
                return None
            stripped = line.lstrip(" \t")
            at = start + len(line) - len(stripped)
            if stripped.startswith("//"):
                return self._line_comments(start, def_indent)
            if stripped.startswith("/*"):
                return self._block_comment(at, def_indent)
            return None
        return None

    def _line_comments(self, first: int, def_indent: int) -> Found:
        text = self.text
        last_end = line_end(text, first)
        for start, end in lines_down(text, first):
            if not text[start:end].lstrip().startswith("//"):
                break
            last_end = end
        block_end = rstrip_at(text, first, last_end)
        return Found.closed(text, "comment", first, block_end, block_end, def_indent)

    def _block_comment(self, open_at: int, def_indent: int) -> Found | None:
        text = self.text
        start = line_start(text, open_at)
        close = text.find("*/", open_at + 2, open_at + 2 + MAX_SPEC_CHARS)
        code = re.compile(r"^[ \t]*\}")
        if close >= 0 and not crosses_code(text, open_at, close, def_indent, code):
            return Found.closed(text, "comment", start, close + 2, close + 2, def_indent)
        if self.cursor < open_at + 2:
            return None
        cursor_end = line_end(text, self.cursor)
        if crosses_code(text, open_at, cursor_end, def_indent, code):
            return None
        closers = ("*/", " */", f"\n{text[start:open_at]} */")
        return close_unclosed(text, "comment", start, open_at + 2, self.cursor, closers, def_indent)
