"""Everything the server tells the client unasked: messages, logs, its state, progress, drafts."""

from __future__ import annotations

import asyncio
import itertools
from typing import TYPE_CHECKING

from lsprotocol import types
from pygls.exceptions import JsonRpcException

from lsp_server import convert, errors
from lsp_server.wire import DRAFT, STATUS, DraftParams, ServerState

if TYPE_CHECKING:
    from pygls.lsp.server import LanguageServer

PROGRESS_CREATE_TIMEOUT_S = 5.0  # a client that never answers progress/create gets no progress


class Notifier:
    """Talks to the client through one LanguageServer."""

    def __init__(self, server: LanguageServer):
        self.server = server
        self._logged: set[str] = set()
        self._drafting_failed = False
        self._progress_ids = itertools.count(1)

    def report(self, exc: BaseException, drafting: bool = False) -> None:
        """Log a failure nobody waits for and show it to the user.

        A drafting failure usually repeats on every keystroke: only the first pops up until
        drafting works again (every one is logged).
        """
        kind, message = errors.to_message(exc)
        self.log(kind, message)
        if kind == types.MessageType.Log or (drafting and self._drafting_failed):
            return
        self._drafting_failed = self._drafting_failed or drafting
        self.server.window_show_message(convert.show_message(kind, message))

    def drafting_works(self) -> None:
        """A draft succeeded: the next drafting failure pops up again."""
        self._drafting_failed = False

    def log(self, kind: types.MessageType, message: str) -> None:
        self.server.window_log_message(convert.log_message(kind, message))

    def log_once(self, kind: types.MessageType, message: str) -> None:
        if message not in self._logged:
            self._logged.add(message)
            self.log(kind, message)

    def status(self, state: ServerState, model: str, message: str) -> None:
        """prewrite/status."""
        self.server.protocol.notify(STATUS, convert.status_params(state, model, message))

    def diagnostics(self, uri: str, version: int | None, items: list[types.Diagnostic]) -> None:
        """textDocument/publishDiagnostics: prewrite's diagnostics of a document (all of them)."""
        params = types.PublishDiagnosticsParams(uri=uri, diagnostics=items, version=version)
        self.server.text_document_publish_diagnostics(params)

    def draft(self, params: DraftParams) -> None:
        """prewrite/draft."""
        self.server.protocol.notify(DRAFT, params)

    async def progress_begin(self, message: str) -> str | None:
        """Start a work done progress if the client shows them; returns its token."""
        if not convert.progress_support(self.server.client_capabilities):
            return None
        token = f"prewrite-load-{next(self._progress_ids)}"
        progress = self.server.work_done_progress
        try:
            await asyncio.wait_for(progress.create_async(token), PROGRESS_CREATE_TIMEOUT_S)
        except (TimeoutError, JsonRpcException):
            return None
        progress.begin(token, convert.progress_begin(message))
        return token

    def progress_end(self, token: str | None, message: str) -> None:
        if token is not None:
            self.server.work_done_progress.end(token, convert.progress_end(message))
