"""Headless-editor pieces the demo, the benchmark and the tests drive the server with.

`Watch` records prewrite's notifications and lets a caller await one that matches, past or
future, so nothing needs to sleep. `keystrokes` turns typing into the incremental didChange
notifications an editor sends, one per character. `Editor` starts the real server over stdio,
initializes it with settings and times requests.
"""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TypeVar, cast

from lsprotocol import types
from pygls.lsp.client import LanguageClient
from pygls.protocol import LanguageServerProtocol

from lsp_server.wire import (
    DRAFT,
    STATS_COMMAND,
    STATUS,
    DraftParams,
    StatusParams,
    WireProtocolMixin,
)

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


class Editor:
    """A headless editor on the real server: `prewrite serve` over stdio, stopped by `close`."""

    def __init__(self, name: str) -> None:
        self.client = LanguageClient(name, "0.1.0", protocol_cls=ClientProtocol)
        self.watch = Watch()
        self.watch.attach(self.client)
        # the newest diagnostics of each document, and when they came (time.perf_counter())
        self.diagnostics: dict[str, tuple[float, list[types.Diagnostic]]] = {}

        @self.client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def on_diagnostics(params: types.PublishDiagnosticsParams) -> None:
            self.diagnostics[params.uri] = (time.perf_counter(), list(params.diagnostics))
        self._drain: asyncio.Future[None] | None = None

    async def start(self, settings: dict[str, Any]) -> StatusParams:
        """Start and initialize the server; the first status after loading the model."""
        await self.client.start_io(*server_command())
        self._drain = asyncio.ensure_future(self._drain_stderr())
        capabilities = types.ClientCapabilities(
            text_document=types.TextDocumentClientCapabilities(
                inline_completion=types.InlineCompletionClientCapabilities()
            )
        )
        await self.client.initialize_async(
            types.InitializeParams(capabilities=capabilities, initialization_options=settings)
        )
        self.client.initialized(types.InitializedParams())
        return await self.watch.settled()

    async def timed(
        self, method: str, uri: str, position: types.Position, invoked: bool = True
    ) -> tuple[float, str]:
        """Milliseconds from request to answer, and the answer's text."""
        started = time.perf_counter()
        answer = await self.client.protocol.send_request_async(
            method, inline_params(uri, position, invoked)
        )
        elapsed = (time.perf_counter() - started) * 1000.0
        return elapsed, first_item_text(answer)

    async def stats(self) -> Any:
        """prewrite.stats."""
        return await self.client.workspace_execute_command_async(command_params(STATS_COMMAND))

    async def close(self) -> None:
        """Shut the server down (when it still runs) and stop reading its stderr."""
        process = self.client._server
        if process is not None and process.returncode is None:
            await self.client.shutdown_async(None)
            self.client.exit(None)
            await process.wait()
        if self._drain is not None:
            self._drain.cancel()

    async def _drain_stderr(self) -> None:
        """Keep the server's stderr pipe from filling up; its lines go to ours."""
        process = self.client._server
        if process is None or process.stderr is None:
            return
        while line := await process.stderr.readline():
            sys.stderr.buffer.write(line)


def first_item_text(answer: Any) -> str:
    """The text of an inline completion answer's first item ('' for none)."""
    items = answer.items if answer is not None else []
    text = items[0].insert_text if items else ""
    return text if isinstance(text, str) else text.value


def last_trigger(stats: Any, uri: str) -> dict[str, Any]:
    """The newest trigger prewrite.stats reports for `uri` ({} for none)."""
    for doc in stats.get("documents", []):
        if doc["uri"] == uri and doc["triggers"]:
            trigger: dict[str, Any] = doc["triggers"][-1]
            return trigger
    return {}


def percentile(values: Sequence[float], p: float) -> float:
    """Nearest-rank percentile (p in 0..100) of a non-empty sequence."""
    ordered = sorted(values)
    rank = max(1, -(-int(p * len(ordered)) // 100))
    return ordered[min(rank, len(ordered)) - 1]


async def sleep_until(deadline: float) -> None:
    """Sleep until `time.perf_counter()` reaches `deadline` (not at all when it has)."""
    delay = deadline - time.perf_counter()
    if delay > 0:
        await asyncio.sleep(delay)


def vllm_settings(url: str | None, model: str | None) -> dict[str, Any]:
    """Server settings (wire names) that point the vLLM runtime at a server, when given."""
    values: dict[str, Any] = {}
    if url:
        values["vllmUrl"] = url
    if model:
        values["vllmModel"] = model
    return values
