"""Documents split into lines where LSP splits them: at \\n, \\r\\n and \\r only.

pygls' TextDocument splits with `str.splitlines`, which also ends a line at \\x0b, \\x0c,
\\x1c-\\x1e, \\x85, \\u2028 and \\u2029. A client counts none of those, so with one of them
before an edit pygls applied it lines away from where the client made it, and the server's
text was no longer the client's.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from pygls.workspace import TextDocument, Workspace

_LINE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+\Z")


def lsp_lines(text: str) -> tuple[str, ...]:
    """The lines of `text` with their line ends, as LSP positions count them."""
    return tuple(_LINE.findall(text))


class LspTextDocument(TextDocument):
    """pygls' document with LSP's lines (edits, offsets and positions all go through them)."""

    @property
    def lines(self) -> Sequence[str]:
        return lsp_lines(self.source)


class LspWorkspace(Workspace):
    """pygls' workspace, holding `LspTextDocument`s."""

    def _create_text_document(
        self,
        doc_uri: str,
        source: str | None = None,
        version: int | None = None,
        language_id: str | None = None,
    ) -> TextDocument:
        return LspTextDocument(
            doc_uri,
            source=source,
            version=version,
            language_id=language_id,
            sync_kind=self._sync_kind,
            position_codec=self.position_codec,
        )

    @classmethod
    def like(cls, workspace: Workspace, sync_kind: Any) -> LspWorkspace:
        """An empty one with the same root, folders and position encoding."""
        folders = list(workspace.folders.values())
        return cls(workspace.root_uri, sync_kind, folders, workspace.position_encoding)
