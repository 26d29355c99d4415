"""The line edits that turn a body a person wrote into the body its changed spec asks for, and
the offer that carries them."""

from __future__ import annotations

import difflib
from dataclasses import dataclass, replace

from lsp_server.spec import Edit


def body_edits(body: str, rewritten: str, at: int) -> list[Edit]:
    """Edits of the document (whose body text starts at offset `at`) that replace exactly the
    lines of `body` that `rewritten` changes, inserts before or deletes; none when they hold
    the same lines (trailing spaces aside). Whole lines, in document order."""
    old = _lines(body)
    new = _lines(rewritten, ends=body.endswith("\n"))
    starts = [at]
    for line in old:
        starts.append(starts[-1] + len(line))
    matcher = difflib.SequenceMatcher(
        None, [line.rstrip() for line in old], [line.rstrip() for line in new], autojunk=False
    )
    return [
        Edit(starts[i1], starts[i2], "".join(new[j1:j2]))
        for tag, i1, i2, j1, j2 in matcher.get_opcodes()
        if tag != "equal"
    ]


def code_edits(edits: list[Edit], language: str) -> list[Edit]:
    """The edits that change what the body does: those that replace or delete a line, or add
    one that is not a comment (a rewrite that only adds comments asks nothing of the body)."""
    comment = ("#",) if language == "python" else ("//", "/*", "*")
    return [
        edit
        for edit in edits
        if edit.end > edit.start
        or any(line.strip() and not line.strip().startswith(comment)
               for line in edit.text.split("\n"))  # fmt: skip
    ]


def lines_touched(body: str, edits: list[Edit], at: int) -> int:
    """How many of the body's lines the edits replace or delete (insertions touch none)."""
    return sum(body[edit.start - at : edit.end - at].count("\n") for edit in edits)


def _lines(text: str, ends: bool = True) -> list[str]:
    """Lines with their newlines; with `ends`, the last one gets one if it lacks it."""
    lines = text.splitlines(keepends=True)
    if ends and lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    return lines


@dataclass(frozen=True)
class Offer:
    """A rewrite of one function's body, for the document text it was made for."""

    spec_start: int
    body_start: int
    spec: str  # the spec it answers, as the document holds it
    body: str  # the body it rewrites, as the document holds it
    edits: tuple[Edit, ...]

    @property
    def noun(self) -> str:
        """What the spec is: "docstring" (a quoted string) or "comment"."""
        quoted = self.spec.lstrip().lstrip("rRuU").startswith(("'", '"'))
        return "docstring" if quoted else "comment"

    @property
    def body_end(self) -> int:
        return self.body_start + len(self.body)

    def moved(self, delta: int) -> Offer:
        return replace(self, spec_start=self.spec_start + delta, body_start=self.body_start + delta,
                       edits=tuple(replace(e, start=e.start + delta, end=e.end + delta)
                                   for e in self.edits))  # fmt: skip

    @property
    def title(self) -> str:
        return f"prewrite: update the body to the {self.noun}"
