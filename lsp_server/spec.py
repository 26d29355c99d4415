"""Spec detection: the docstring or comment a function is written from, and the request it makes.

A spec is found only where the server can write: the cursor is in the spec (or on the blank
lines right after it) and the function has no code yet besides what is typed on the cursor
line. The request is the document up to the spec, the spec closed properly, then a newline;
the suffix is the code after the function. Everything works on offsets into the document
text and looks at a window of lines around the cursor, so a 5 MB document costs no more than
a small one.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

from inference.api import Language, Request

SpecKind = Literal["docstring", "comment"]

SCAN_LINES = 400  # how far (in lines) the detector looks from the cursor
MAX_SPEC_CHARS = 20_000  # a docstring longer than this is treated as unclosed
HEADER_LINES = 40  # the most lines one function header may span
CANDIDATES = 3  # function headers above the cursor tried, nearest first

PYTHON_IDS = frozenset({"python"})
BRACE_IDS = frozenset(
    {
        "javascript", "javascriptreact", "typescript", "typescriptreact", "c", "cpp",
        "objective-c", "objective-cpp", "java", "csharp", "go", "rust", "kotlin", "swift",
        "scala", "php", "dart",
    }
)
_EXTENSIONS: dict[str, Language] = {
    ".py": "python", ".pyi": "python", ".pyw": "python",
    **{
        ext: "brace"
        for ext in (
            ".js", ".jsx", ".mjs", ".cjs", ".ts", ".tsx", ".mts", ".cts", ".c", ".h", ".cc",
            ".cpp", ".cxx", ".hpp", ".hh", ".m", ".mm", ".java", ".cs", ".go", ".rs", ".kt",
            ".kts", ".swift", ".scala", ".php", ".dart",
        )
    },
}

_PY_DEF = re.compile(r"^([ \t]*)(?:async[ \t]+)?def[ \t]+\w+")
_PY_CODE_START = re.compile(r"^[ \t]*(?:(?:async[ \t]+)?def|class)[ \t]+\w+")
_PY_DOCSTRING = re.compile(r"(?P<prefix>[rRuU]?)(?P<quote>\"\"\"|'''|\"|')")
_PY_STRINGS = re.compile(r"'(?:\\.|[^'\\])*'|\"(?:\\.|[^\"\\])*\"")
_BRACE_CONTROL = r"(?!(?:if|else|for|foreach|while|switch|catch|do|try|return|with|elif)\b)"
_BRACE_SIGNATURE = rf"^([ \t]*)(?=\S){_BRACE_CONTROL}[^;{{}}]*\([^;{{}}]*\)[^;{{}}]*"
_BRACE_HEADER = re.compile(_BRACE_SIGNATURE + r"\{\s*$")  # `name(args) {`
_BRACE_ALLMAN = re.compile(_BRACE_SIGNATURE + r"$")  # `name(args)`, then `{` on its own line
_BRACE_COMMENT = re.compile(r"^[ \t]*(?://|/\*|\*)")


@dataclass(frozen=True)
class Spec:
    """A spec under the cursor and the engine request it makes.

    Offsets index the document text. The answer goes right after `insert_at` (the end of the
    spec's last line, or of the header line for a comment above the function), preceded by
    `closing` and a newline.
    """

    kind: SpecKind
    start: int  # first character of the spec
    end: int  # just past the spec as typed (its closing quotes or comment end included)
    insert_at: int  # end of the line the answer follows
    closing: str  # what the document lacks to close the spec ('' when it is closed)
    request: Request


@dataclass(frozen=True)
class Edit:
    """Replace document[start:end] with text: how an answer lands in the document."""

    start: int
    end: int
    text: str


def language_of(language_id: str | None, uri: str) -> Language | None:
    """The engine language of a document from its LSP language id, else from its extension."""
    if language_id in PYTHON_IDS:
        return "python"
    if language_id in BRACE_IDS:
        return "brace"
    path = uri.rsplit("?", 1)[0].rsplit("#", 1)[0]
    dot = path.rfind(".")
    return _EXTENSIONS.get(path[dot:].lower()) if dot > path.rfind("/") else None


def find_spec(
    text: str,
    cursor: int,
    language: Language,
    prefix_chars: int = 8000,
    suffix_chars: int = 2000,
) -> Spec | None:
    """The spec the cursor is in (or right after), or None where there is nothing to write."""
    cursor = max(0, min(cursor, len(text)))
    finder = _PythonFinder(text, cursor) if language == "python" else _BraceFinder(text, cursor)
    for found in finder.candidates():
        suffix_start = _writable(text, found, cursor)
        if suffix_start is None:
            continue
        before = text[max(0, found.text_end - prefix_chars - 1) : found.text_end]
        request = Request(
            text=_tail(before, prefix_chars) + found.closing + "\n",
            suffix=_head(text[suffix_start : suffix_start + suffix_chars + 1], suffix_chars),
            language=language,
        )
        insert_at = _line_end(text, found.text_end)
        return Spec(found.kind, found.start, found.end, insert_at, found.closing, request)
    return None


def answer_edit(text: str, spec: Spec, cursor: int, answer: str) -> Edit | None:
    """Where and how the answer (the body the engine wrote) goes, seen from the cursor.

    At or before the spec's last line the edit runs from the cursor to the end of that line
    and restates what is there, so it reads as a continuation of the cursor. On a body line
    it replaces what was typed there, which must be a prefix of the answer.
    """
    body = answer.rstrip("\n")
    if not body.strip():
        return None
    cursor = max(0, min(cursor, len(text)))
    if cursor <= spec.insert_at:
        return Edit(cursor, spec.insert_at, f"{text[cursor:spec.insert_at]}{spec.closing}\n{body}")
    start = _line_start(text, cursor)
    typed = text[start:cursor]
    if typed.strip() and not body.startswith(typed):
        return None
    return Edit(start, cursor, body)


# -- shared machinery -----------------------------------------------------------------------


@dataclass(frozen=True)
class _Found:
    """A spec candidate before the writability check."""

    kind: SpecKind
    start: int
    end: int
    text_end: int  # the request's document text ends here
    closing: str
    def_indent: int  # indentation of the function header


def _line_start(text: str, offset: int) -> int:
    return text.rfind("\n", 0, offset) + 1


def _line_end(text: str, offset: int) -> int:
    end = text.find("\n", offset)
    return len(text) if end < 0 else end


def _lines_down(text: str, start: int, limit: int = SCAN_LINES) -> Iterator[tuple[int, int]]:
    """(start, end) of the lines from the one at `start` down, at most `limit` of them."""
    pos = _line_start(text, start)
    for _ in range(limit):
        end = _line_end(text, pos)
        yield pos, end
        if end >= len(text):
            return
        pos = end + 1


def _lines_up(text: str, start: int, limit: int = SCAN_LINES) -> Iterator[tuple[int, int]]:
    """(start, end) of the lines from the one at `start` up, at most `limit` of them."""
    pos = _line_start(text, start)
    for _ in range(limit):
        yield pos, _line_end(text, pos)
        if pos == 0:
            return
        pos = _line_start(text, pos - 1)


def _indent(line: str) -> int:
    stripped = line.lstrip(" \t")
    return len(line[: len(line) - len(stripped)].expandtabs(4))


def _is_blank(line: str) -> bool:
    return not line.strip()


def _rstrip_at(text: str, start: int, end: int) -> int:
    """`end` moved left over trailing whitespace, not past `start`."""
    while end > start and text[end - 1].isspace():
        end -= 1
    return end


def _tail(text: str, limit: int) -> str:
    """The last `limit` characters of text, starting at a line boundary when cut."""
    if len(text) <= limit:
        return text
    cut = text.find("\n", len(text) - limit)
    return text[cut + 1 :] if cut >= 0 else text[len(text) - limit :]


def _head(text: str, limit: int) -> str:
    """The first `limit` characters of text, ending at a line boundary when cut."""
    if len(text) <= limit:
        return text
    cut = text.rfind("\n", 0, limit)
    return text[: cut + 1] if cut >= 0 else text[:limit]


def _writable(text: str, found: _Found, cursor: int) -> int | None:
    """Where the suffix starts if the cursor may write here, else None.

    Below the spec there may be blank lines and the cursor's own line with what was typed of
    the body; any other line still inside the function means the body exists already.
    """
    if cursor < found.start:
        return None
    insert_at = _line_end(text, found.text_end)
    cursor_ok = cursor <= insert_at
    if insert_at >= len(text):
        return len(text) if cursor_ok else None
    for start, end in _lines_down(text, insert_at + 1):
        line = text[start:end]
        if not _is_blank(line) and _indent(line) <= found.def_indent:
            return start if cursor_ok and cursor < start else None
        on_cursor = start <= cursor <= end
        if on_cursor:
            cursor_ok = True
        elif not _is_blank(line):
            return None
        if end >= len(text):
            return len(text) if cursor_ok else None
    return None


def _crosses_code(text: str, start: int, end: int, def_indent: int, code: re.Pattern) -> bool:
    """True when a line strictly after `start`'s line up to `end` leaves the function body."""
    first = _line_end(text, start) + 1
    if first > end:
        return False
    for line_start, line_end in _lines_down(text, first, limit=SCAN_LINES * 4):
        if line_start > end:
            return False
        line = text[line_start : min(line_end, end)]
        if not _is_blank(line) and (_indent(line) <= def_indent or code.match(line)):
            return True
        if line_end >= len(text):
            return False
    return True


def _close_unclosed(content: str, indent: str, closer: str, one_line: str) -> str:
    """Closing text for an unclosed spec: on its own line once the spec spans lines."""
    if "\n" in content or content.endswith(closer[0]):
        return f"\n{indent}{closer}"
    return one_line


# -- Python ---------------------------------------------------------------------------------


class _PythonFinder:
    """Docstrings and `#` comment blocks of Python functions."""

    def __init__(self, text: str, cursor: int):
        self.text = text
        self.cursor = cursor

    def candidates(self) -> Iterator[_Found]:
        line = self._line(self.cursor)
        if line.lstrip().startswith("#"):
            above = self._comment_above(_line_start(self.text, self.cursor))
            if above:
                yield above
        headers = 0
        for start, end in _lines_up(self.text, self.cursor):
            if _PY_DEF.match(self.text[start:end]):
                found = self._body_spec(start)
                if found:
                    yield found
                headers += 1
                if headers == CANDIDATES:
                    return

    def _line(self, offset: int) -> str:
        return self.text[_line_start(self.text, offset) : _line_end(self.text, offset)]

    def _comment_above(self, line_start: int) -> _Found | None:
        """A `#` block whose next line (after decorators) is a def at the same indentation."""
        text, indent = self.text, _indent(self._line(line_start))
        first = line_start
        for start, end in _lines_up(text, line_start):
            if not self._is_comment(text[start:end], indent):
                break
            first = start
        last_end = None
        for start, end in _lines_down(text, line_start):
            line = text[start:end]
            if self._is_comment(line, indent):
                last_end = end
                continue
            if line.lstrip().startswith("@") and _indent(line) == indent:
                continue
            if _PY_DEF.match(line) and _indent(line) == indent and last_end is not None:
                header_end = self._header_end(start)
                if header_end is None:
                    return None
                block_end = _rstrip_at(text, first, last_end)
                text_end = _rstrip_at(text, start, header_end)
                return _Found("comment", first, block_end, text_end, "", indent)
            return None
        return None

    @staticmethod
    def _is_comment(line: str, indent: int) -> bool:
        return line.lstrip().startswith("#") and _indent(line) == indent

    def _header_end(self, def_start: int) -> int | None:
        """End of the line that closes a (possibly multi-line) def header with its colon."""
        depth = 0
        for start, end in _lines_down(self.text, def_start, HEADER_LINES):
            code = _PY_STRINGS.sub('""', self.text[start:end]).split("#", 1)[0]
            depth += sum(code.count(c) for c in "([{") - sum(code.count(c) for c in ")]}")
            if depth <= 0:
                return end if code.rstrip().endswith(":") else None
        return None

    def _body_spec(self, def_start: int) -> _Found | None:
        """The docstring or leading comment block of the def starting at `def_start`."""
        text = self.text
        def_indent = _indent(self._line(def_start))
        header_end = self._header_end(def_start)
        if header_end is None or header_end >= len(text):
            return None
        for start, end in _lines_down(text, header_end + 1):
            line = text[start:end]
            if _is_blank(line):
                continue
            if _indent(line) <= def_indent:
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

    def _leading_comments(self, first: int, def_indent: int) -> _Found:
        text, indent = self.text, _indent(self._line(first))
        last_end = _line_end(text, first)
        for start, end in _lines_down(text, first):
            if not self._is_comment(text[start:end], indent):
                break
            last_end = end
        block_end = _rstrip_at(text, first, last_end)
        return _Found("comment", first, block_end, block_end, "", def_indent)

    def _docstring(self, open_at: int, quote: str, def_indent: int) -> _Found | None:
        text = self.text
        start = _line_start(text, open_at)
        content = open_at + len(quote)
        limit = _line_end(text, content) if len(quote) == 1 else content + MAX_SPEC_CHARS
        close = text.find(quote, content, limit)
        if close >= 0 and not _crosses_code(text, open_at, close, def_indent, _PY_CODE_START):
            end = close + len(quote)
            return _Found("docstring", start, end, end, "", def_indent)
        # Unclosed: the spec runs to the end of the cursor's line, which must lie inside it.
        if self.cursor < content:
            return None
        if len(quote) == 1 and _line_start(text, self.cursor) != start:
            return None
        cursor_end = _line_end(text, self.cursor)
        if _crosses_code(text, open_at, cursor_end, def_indent, _PY_CODE_START):
            return None
        text_end = _rstrip_at(text, content, cursor_end)
        lead = text[start:open_at]
        indent = lead[: len(lead) - len(lead.lstrip(" \t"))]
        closing = _close_unclosed(text[content:text_end], indent, quote, quote)
        if len(quote) == 1:
            closing = quote
        return _Found("docstring", start, text_end, text_end, closing, def_indent)


# -- JavaScript, TypeScript and the C family ----------------------------------------------------


class _BraceFinder:
    """`//` and `/* */` comments above a function or at the start of its body."""

    def __init__(self, text: str, cursor: int):
        self.text = text
        self.cursor = cursor

    def candidates(self) -> Iterator[_Found]:
        text = self.text
        line_start = _line_start(text, self.cursor)
        if _BRACE_COMMENT.match(text[line_start : _line_end(text, line_start)]):
            above = self._comment_above(line_start)
            if above:
                yield above
        headers = 0
        for start, end in _lines_up(text, self.cursor):
            body = self._body_start(start, end)
            if body is None:
                continue
            found = self._body_spec(body, _indent(text[start:end]))
            if found:
                yield found
            headers += 1
            if headers == CANDIDATES:
                return

    def _body_start(self, start: int, end: int) -> int | None:
        """End of the line holding the opening brace if a function header starts here."""
        line = self.text[start:end]
        if _BRACE_HEADER.match(line):
            return end
        if _BRACE_ALLMAN.match(line) and end < len(self.text):
            next_end = _line_end(self.text, end + 1)
            if self.text[end + 1 : next_end].strip() == "{":
                return next_end
        return None

    def _comment_above(self, line_start: int) -> _Found | None:
        """A comment block whose next line (after annotations) is a function header."""
        text = self.text
        first = line_start
        for start, end in _lines_up(text, line_start):
            line = text[start:end]
            if not _BRACE_COMMENT.match(line):
                break
            first = start
            if line.lstrip().startswith("/*"):
                break
        last_end = None
        for start, end in _lines_down(text, line_start):
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
            block_end = _rstrip_at(text, first, last_end)
            text_end = _rstrip_at(text, start, body)
            return _Found("comment", first, block_end, text_end, "", _indent(line))
        return None

    def _body_spec(self, brace_end: int, def_indent: int) -> _Found | None:
        """The comment right after a function's opening brace."""
        text = self.text
        if brace_end >= len(text):
            return None
        for start, end in _lines_down(text, brace_end + 1):
            line = text[start:end]
            if _is_blank(line):
                continue
            if _indent(line) <= def_indent:
                return None
            stripped = line.lstrip(" \t")
            at = start + len(line) - len(stripped)
            if stripped.startswith("//"):
                return self._line_comments(start, def_indent)
            if stripped.startswith("/*"):
                return self._block_comment(at, def_indent)
            return None
        return None

    def _line_comments(self, first: int, def_indent: int) -> _Found:
        text = self.text
        last_end = _line_end(text, first)
        for start, end in _lines_down(text, first):
            if not text[start:end].lstrip().startswith("//"):
                break
            last_end = end
        block_end = _rstrip_at(text, first, last_end)
        return _Found("comment", first, block_end, block_end, "", def_indent)

    def _block_comment(self, open_at: int, def_indent: int) -> _Found | None:
        text = self.text
        start = _line_start(text, open_at)
        close = text.find("*/", open_at + 2, open_at + 2 + MAX_SPEC_CHARS)
        code = re.compile(r"^[ \t]*\}")
        if close >= 0 and not _crosses_code(text, open_at, close, def_indent, code):
            return _Found("comment", start, close + 2, close + 2, "", def_indent)
        if self.cursor < open_at + 2:
            return None
        cursor_end = _line_end(text, self.cursor)
        if _crosses_code(text, open_at, cursor_end, def_indent, code):
            return None
        text_end = _rstrip_at(text, open_at + 2, cursor_end)
        indent = text[start:open_at]
        closing = _close_unclosed(text[open_at + 2 : text_end], indent + " ", "*/", " */")
        return _Found("comment", start, text_end, text_end, closing, def_indent)
