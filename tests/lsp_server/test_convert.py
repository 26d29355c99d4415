"""Offset <-> position conversion at the edges of a document."""

from __future__ import annotations

import pytest
from pygls.workspace import TextDocument

from lsp_server.convert import offset_at, position_at

pytestmark = pytest.mark.timeout(60)


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
