"""Spec detection: the docstring or comment a function is written from, and the request it makes.

A spec is found only where the server can write: the cursor is in the spec (or on the blank
lines right after it) and the function has no code yet besides what is typed on the cursor
line. The request is the document up to the spec, the spec closed properly, then a newline;
the suffix is the code after the function. A comment inside a body that already has code (a
`block` spec) asks for the code that goes between it and the code below: the request ends with
the comment, the suffix is the rest of the function below it (each edit of the comment makes
the model read the suffix again, so it holds only what the block must fit), and the request
carries the comment's indentation, where the block ends. Everything works on offsets into the
document text and looks at a window of lines around the cursor, so a 5 MB document costs no
more than a small one.
"""

from __future__ import annotations

from dataclasses import dataclass

from inference.api import Language, Request
from lsp_server.spec.brace import BraceFinder
from lsp_server.spec.python import PythonFinder
from lsp_server.spec.text import (
    Found,
    SpecKind,
    block_suffix,
    function_end,
    head,
    line_end,
    line_start,
    rstrip_at,
    tail,
    writable,
)

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

    def written_at(self, point: int | None) -> bool:
        """True when the spec is closed and the editing `point` is past it: the user has
        finished writing it (typed the closing quotes, or moved on to the body)."""
        if self.closing or point is None:
            return False
        return point > self.end or (point == self.end and self.kind == "docstring")


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
    finder = PythonFinder(text, cursor) if language == "python" else BraceFinder(text, cursor)
    for found in finder.candidates():
        if found.kind == "block":
            suffix_start = block_suffix(text, found, cursor)
        else:
            suffix_start = writable(text, found, cursor)
        if suffix_start is None:
            continue
        suffix_end = None
        if found.kind == "block":  # the rest of the function: what the block must fit
            suffix_end = function_end(text, suffix_start, found.def_indent, language)
        window = (prefix_chars, suffix_chars)
        request = _request(text, found, suffix_start, suffix_end, language, window)
        return Spec(found.kind, found.start, found.end, found.insert_at, found.rest, request)
    return None


def _request(
    text: str,
    found: Found,
    suffix_start: int,
    suffix_end: int | None,
    language: Language,
    window: tuple[int, int],
) -> Request:
    """The request a found spec makes: the document up to it (closed), the code from
    `suffix_start` (to `suffix_end` at most), each cut to its `window` of characters.

    The window above ends where the spec's first line begins, not at the cursor: typing the
    spec never moves its start, so the prompt's tokens before the spec stay cached (a window
    ending at the cursor would drop a line at its far end every line or so typed, and the
    model would read the whole window again)."""
    prefix_chars, suffix_chars = window
    spec_line = line_start(text, found.start)
    if found.text_end - spec_line > prefix_chars:  # a spec longer than the window: its end
        spec_line = line_start(text, found.text_end - prefix_chars)
    above = tail(text[max(0, spec_line - prefix_chars - 1) : spec_line], prefix_chars)
    end = suffix_start + suffix_chars + 1
    return Request(
        text=above + text[spec_line : found.text_end] + found.closing + "\n",
        suffix=head(text[suffix_start : min(end, suffix_end or end)], suffix_chars),
        language=language,
        block_indent=found.block_indent,
        spec_start=len(above) if found.kind == "block" else None,
    )


def opening_request(text: str, language: Language, prefix_chars: int = 8000) -> Request | None:
    """What the prompt of a comment typed in a body of this document begins with, before any
    edit: the document's first `prefix_chars` characters (cut at a line) as the code above an
    empty block comment at their end. Encoded while the document is read, it is the cached
    start of the prompt of a comment typed within them (None for an empty document)."""
    above = head(text, prefix_chars)
    above = above[: line_start(above, len(above))]  # whole lines only
    if not above.strip():
        return None
    return Request(text=above, language=language, block_indent=0, spec_start=len(above))


@dataclass(frozen=True)
class Respec:
    """A function that has a body, with the cursor in its (closed) spec: a spec being changed.

    Offsets index the document text: the spec is text[spec_start:spec_end], the body
    text[body_start:body_end] (whole lines, trailing blank lines left out). The request is the
    one the spec would make if the function had no body yet: the body the spec asks for is its
    answer.
    """

    spec_start: int
    spec_end: int
    body_start: int
    body_end: int
    request: Request

    def spec(self, text: str) -> str:
        """The spec's text in `text`."""
        return text[self.spec_start : self.spec_end]

    def body(self, text: str) -> str:
        """The body's text in `text`."""
        return text[self.body_start : self.body_end]


def find_respec(
    text: str,
    cursor: int,
    language: Language,
    prefix_chars: int = 8000,
    suffix_chars: int = 2000,
) -> Respec | None:
    """The function whose closed docstring or leading comment the cursor is in while the
    function has a body (code besides the spec), or None."""
    cursor = max(0, min(cursor, len(text)))
    finder = PythonFinder(text, cursor) if language == "python" else BraceFinder(text, cursor)
    for found in finder.candidates():
        if found.kind == "block" or found.rest or not found.start <= cursor <= found.end:
            continue
        if writable(text, found, cursor) is not None:  # no body: drafting writes one
            continue
        body_start = line_end(text, found.insert_at) + 1
        if body_start >= len(text):
            continue
        end = function_end(text, body_start, found.def_indent, language)
        body_end = rstrip_at(text, body_start, end)
        if body_end < len(text) and text[body_end] == "\n":
            body_end += 1
        if not text[body_start:body_end].strip():
            continue
        request = _request(text, found, end, None, language, (prefix_chars, suffix_chars))
        return Respec(found.start, found.end, body_start, body_end, request)
    return None


def answer_edit(text: str, spec: Spec, cursor: int, answer: str) -> Edit | None:
    """Where and how the answer (the body the engine wrote) goes, seen from the cursor.

    At or before the spec's last line the edit runs from the cursor to the end of that line
    and restates what is there, so it reads as a continuation of the cursor. On a body line
    it replaces what was typed there, which must be a prefix of the answer.
    """
    cursor = max(0, min(cursor, len(text)))
    end = spec.insert_at if cursor <= spec.insert_at else cursor
    body = answer.rstrip("\n")
    # the lines below that the answer could repeat (and blank ones between), not the whole rest
    below_at, window = line_end(text, end), 2 * len(body) + 1024
    body = without_lines_below(body, head(text[below_at : below_at + window + 1], window))
    if not body.strip():
        return None
    if cursor <= spec.insert_at:
        return Edit(cursor, spec.insert_at, f"{text[cursor:spec.insert_at]}{spec.closing}\n{body}")
    start = line_start(text, cursor)
    typed = text[start:cursor]
    if typed.strip() and not body.startswith(typed):
        return None
    return Edit(start, cursor, body)


def without_lines_below(body: str, below: str) -> str:
    """`body` less its last lines where the document's next lines already hold them.

    A brace language's answer ends with the function's `}`, which the editor has often put
    below the cursor already (auto-closing): the answer stops before the longest run of its
    last non-blank lines that equals the first non-blank lines of `below` (indentation aside),
    so accepting it never repeats them. `below` starts with the line after the edit's line.
    """
    lines = body.split("\n")
    code = [i for i, line in enumerate(lines) if line.strip()]
    following = [line.strip() for line in below.split("\n") if line.strip()][: len(code)]
    for k in range(min(len(code), len(following)), 0, -1):
        if [lines[i].strip() for i in code[-k:]] == following[:k]:
            return "\n".join(lines[: code[-k]]).rstrip()
    return body
