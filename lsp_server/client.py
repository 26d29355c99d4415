"""Headless-editor pieces the demo and the tests drive the server with: keystrokes and a watch.

`Watch` records prewrite's notifications and lets a caller await one that matches, past or
future, so nothing needs to sleep. `keystrokes` turns typing into the incremental didChange
notifications an editor sends, one per character.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable, Iterator
from typing import Any, TypeVar, cast

from lsprotocol import types
from pygls.protocol import LanguageServerProtocol

from lsp_server.wire import DRAFT, STATUS, DraftParams, StatusParams, WireProtocolMixin

T = TypeVar("T")


class ClientProtocol(WireProtocolMixin, LanguageServerProtocol):
    """A pygls client protocol that knows prewrite's methods."""


def server_command() -> list[str]:
    """The command that starts `prewrite serve` with this interpreter."""
    return [sys.executable, "-m", "lsp_server.cli", "serve"]


class Watch:
    """prewrite/draft and prewrite/status notifications, awaitable by condition."""

    def __init__(self) -> None:
        self.drafts: list[DraftParams] = []
        self.statuses: list[StatusParams] = []
        self._waiters: list[tuple[Callable[[Any], bool], asyncio.Future[Any]]] = []

    def attach(self, client: Any) -> None:
        """Register on a pygls client (before it starts)."""

        def on_draft(params: DraftParams) -> None:
            self.on_draft(params)

        def on_status(params: StatusParams) -> None:
            self.on_status(params)

        client.feature(DRAFT)(on_draft)
        client.feature(STATUS)(on_status)

    def on_draft(self, params: DraftParams) -> None:
        self.drafts.append(params)
        self._wake(params)

    def on_status(self, params: StatusParams) -> None:
        self.statuses.append(params)
        self._wake(params)

    async def draft(self, match: Callable[[DraftParams], bool]) -> DraftParams:
        """The first draft notification (already seen or still to come) that matches."""
        return await self._first(self.drafts, DraftParams, match)

    async def status(self, match: Callable[[StatusParams], bool]) -> StatusParams:
        """The first status notification (already seen or still to come) that matches."""
        return await self._first(self.statuses, StatusParams, match)

    async def settled(self) -> StatusParams:
        """The first status that is not `loading`: the model is ready or failed."""
        return await self.status(lambda s: s.state != "loading")

    async def _first(self, seen: list[T], kind: type, match: Callable[[T], bool]) -> T:
        for item in seen:
            if match(item):
                return item
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()

        def wanted(params: Any) -> bool:
            return isinstance(params, kind) and match(cast(T, params))

        self._waiters.append((wanted, future))
        result: T = await future
        return result

    def _wake(self, params: Any) -> None:
        for waiter in list(self._waiters):
            match, future = waiter
            if not future.done() and match(params):
                future.set_result(params)
                self._waiters.remove(waiter)


def position_of(text: str, offset: int) -> types.Position:
    """The LSP position (UTF-16 columns) of an offset."""
    line_start = text.rfind("\n", 0, offset) + 1
    column = text[line_start:offset]
    units = len(column.encode("utf-16-le")) // 2
    return types.Position(line=text.count("\n", 0, offset), character=units)


def keystrokes(
    uri: str, text: str, offset: int, typed: str, version: int
) -> Iterator[tuple[types.DidChangeTextDocumentParams, str]]:
    """(didChange, resulting text) for each character of `typed` inserted at `offset`."""
    for char in typed:
        position = position_of(text, offset)
        change = types.TextDocumentContentChangePartial(
            range=types.Range(start=position, end=position), text=char
        )
        text = text[:offset] + char + text[offset:]
        offset += len(char)
        version += 1
        yield (
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
                content_changes=[change],
            ),
            text,
        )


def open_params(uri: str, text: str, language: str = "python") -> types.DidOpenTextDocumentParams:
    """didOpen params for a document at version 0."""
    return types.DidOpenTextDocumentParams(
        text_document=types.TextDocumentItem(uri=uri, language_id=language, version=0, text=text)
    )


def inline_params(
    uri: str, position: types.Position, invoked: bool = True
) -> types.InlineCompletionParams:
    """textDocument/inlineCompletion params (also those of prewrite/plainCompletion)."""
    kind = (
        types.InlineCompletionTriggerKind.Invoked
        if invoked
        else types.InlineCompletionTriggerKind.Automatic
    )
    return types.InlineCompletionParams(
        context=types.InlineCompletionContext(trigger_kind=kind),
        text_document=types.TextDocumentIdentifier(uri=uri),
        position=position,
    )


def command_params(command: str, *arguments: Any) -> types.ExecuteCommandParams:
    """workspace/executeCommand params."""
    return types.ExecuteCommandParams(command=command, arguments=list(arguments) or None)
