"""Offset <-> position conversion at the edges of a document; what an edit ends."""

from __future__ import annotations

import pytest
from lsprotocol import types
from pygls.workspace import TextDocument

from lsp_server.convert import boundary, offset_at, position_at


@pytest.mark.parametrize(
    ("source", "offset", "line", "character"),
    [
        ("def f():\n    pass", 17, 1, 8),  # end of a document without a final newline
        ("def f():\n    pass\n", 18, 2, 0),  # end of a document with one
        ("x = 'é'\ny", 9, 1, 1),
        ("", 0, 0, 0),
        ("a\nb", 1, 0, 1),
    ],
)
def test_position_at_stays_inside_the_document(source, offset, line, character):
    document = TextDocument("file:///t.py", source)
    position = position_at(document, offset)
    assert (position.line, position.character) == (line, character)
    assert offset_at(document, position) == offset


@pytest.mark.parametrize(
    ("inserted", "ended"),
    [("a", "none"), ("", "none"), (" ", "word"), (",", "word"), ('"', "word"), (".", "sentence"),
     ("?", "sentence"), (":", "sentence"), ("\n    ", "sentence"), ("x\ny", "sentence")],
)  # fmt: skip
def test_an_edit_ends_a_sentence_a_word_or_neither(inserted, ended):
    at = types.Position(line=0, character=3)
    where = types.Range(start=at, end=at)
    change = types.TextDocumentContentChangePartial(range=where, text=inserted)
    assert boundary([change]) == ended


def test_a_whole_text_change_ends_a_sentence():
    assert boundary([types.TextDocumentContentChangeWholeDocument(text="def f():\n")]) == "sentence"
